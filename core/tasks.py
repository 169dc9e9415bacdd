"""Celery's ``shared_task``, typed: Celery ships no types, so every task it decorates would be untyped.

At run time this is ``celery.shared_task`` itself; only the type checker reads the signatures here.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Concatenate, Literal, ParamSpec, Protocol, TypeVar, overload

P = ParamSpec("P")
R = TypeVar("R", covariant=True)


class TypedTask(Protocol[P, R]):
    """A task as the project uses it: called in-process, or queued with ``delay``."""

    name: str

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R: ...
    def delay(self, *args: P.args, **kwargs: P.kwargs) -> Any: ...
    def apply_async(
        self, args: tuple[Any, ...] | None = None, kwargs: dict[str, Any] | None = None, **options: Any
    ) -> Any: ...


if TYPE_CHECKING:

    @overload
    def shared_task(
        *, bind: Literal[True], **options: Any
    ) -> Callable[[Callable[Concatenate[Any, P], R]], TypedTask[P, R]]: ...
    @overload
    def shared_task(
        *, bind: Literal[False] = False, **options: Any
    ) -> Callable[[Callable[P, R]], TypedTask[P, R]]: ...
    def shared_task(*, bind: bool = False, **options: Any) -> Any: ...

else:
    from celery import shared_task

__all__ = ["TypedTask", "shared_task"]
