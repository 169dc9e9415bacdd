"""The TypeScript client throws the same class, in the same hierarchy, for each code as Python does."""

import json

from custodian_client import errors

from tests.client_typescript.node import node_env, run

PRINT_TABLE = """
import { CODE_CLASSES, CustodianError, errorFor } from "./dist/index.js";
const lineage = (cls) => {
  const names = [];
  for (let c = cls; c !== CustodianError; c = Object.getPrototypeOf(c)) names.push(c.name);
  return [...names, "CustodianError"];
};
const table = Object.fromEntries([...CODE_CLASSES].map(([code, cls]) => [code, lineage(cls)]));
const fallback = Object.fromEntries(
  [[401, {}], [403, {}], [404, {}], [409, {}], [422, {}], [422, {proposal_id: "p"}], [429, {}],
   [500, {}], [503, {}], [418, {}]].map(([status, extra]) => [
    `${status}${"proposal_id" in extra ? "+proposal" : ""}`,
    errorFor(status, { code: "not_a_code_yet", ...extra }).constructor.name,
  ]),
);
console.log(JSON.stringify({ table, fallback }));
"""


def _python_lineage(cls: type) -> list[str]:
    return [c.__name__ for c in cls.__mro__ if issubclass(c, errors.CustodianError)]


def _typescript_tables(package) -> dict:
    output = run(["node", "--input-type=module", "--eval", PRINT_TABLE], env=node_env())
    return json.loads(output)


def test_each_code_has_the_same_class_and_ancestry_as_in_python(package):
    python = {code: _python_lineage(cls) for code, cls in errors.CODE_CLASSES.items()}
    assert _typescript_tables(package)["table"] == python


def test_an_unknown_code_falls_back_by_status_family_as_in_python(package):
    expected = {}
    for status, extra in [(401, {}), (403, {}), (404, {}), (409, {}), (422, {}), (422, {"proposal_id": "p"})]:
        expected[f"{status}{'+proposal' if extra else ''}"] = errors.error_for(
            status, {"code": "not_a_code_yet", **extra}
        )
    for status in (429, 500, 503, 418):
        expected[str(status)] = errors.error_for(status, {"code": "not_a_code_yet"})
    names = {key: type(error).__name__ for key, error in expected.items()}
    assert _typescript_tables(package)["fallback"] == names
