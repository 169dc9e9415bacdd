"""The review UI: thin views over the selectors and services, rendered with htmx fragments."""

import hashlib
import json
from contextlib import suppress

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UsernameField
from django.contrib.auth.views import LoginView
from django.core.cache import cache
from django.core.exceptions import BadRequest
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from redis.exceptions import RedisError

from core.api.pagination import InvalidCursor
from core.api.problems import tag_problem
from core.errors import DomainError
from core.keyset import keyset_page
from evidence.models import EvidenceRevision
from memory_core.selectors import memory_at_revision, memory_history, memory_or_none
from proposals.errors import DreamingRunNotFound, ProposalNotFound
from proposals.selectors import dedupe_conflicts, dreaming_run_status
from reviews.charts import hbars, outcome_bars
from reviews.figures import cited_figures, evidence_rows, external_link, found_figures
from reviews.forms import BulkApproveForm, DecideTogetherForm, DecisionForm, QueueFilterForm
from reviews.models import ReviewDecision
from reviews.presenters import (
    admission_rows,
    conflict_rows,
    diff_rows,
    plain_language,
)
from reviews.roles import landing
from reviews.selectors import (
    QUEUE_ORDERS,
    approving_decisions,
    can_decide,
    count_up_to,
    decision_history,
    dreaming_run_for_review,
    dreaming_runs_for_review,
    is_submitter,
    needing,
    proposal_for_review,
    representable_owners,
    review_queue,
    reviewer_dashboard,
)
from reviews.services import TogetherItem, bulk_approve, decide_together, record_decision
from tenancy.throttling import client_address

PAGE_SIZE = 50
QUEUE_COUNT_CAP = 1000


@login_required
def queue(request):
    """The person's review queue; someone who only audits is sent where they start (``reviews.roles``)."""
    start = landing(request.user)
    if start != request.path:
        return redirect(start)
    form = QueueFilterForm(request.GET or None)
    filters = form.queue_filters()
    proposals = review_queue(user=request.user, **filters)
    try:
        page = keyset_page(
            proposals,
            ordering=QUEUE_ORDERS[filters.get("order", "age")],
            cursor=request.GET.get("after"),
            size=PAGE_SIZE,
        )
    except InvalidCursor:
        raise BadRequest("This page link is not one the queue issued.") from None
    query = request.GET.copy()
    query.pop("after", None)
    return render(
        request,
        "reviews/queue.html",
        {
            "form": form,
            "page": page,
            "matching": count_up_to(proposals, QUEUE_COUNT_CAP),
            "query": query.urlencode(),
            "bulk_form": BulkApproveForm(user=request.user, auto_id="bulk_%s"),
            "bulk_selectable": any(proposal.is_low_risk for proposal in page.items),
        },
    )


@login_required
def proposal_page(request, proposal_id):
    proposal = _proposal_or_404(request, proposal_id)
    memory = memory_or_none(tenant_id=proposal.tenant_id, memory_id=proposal.target_id)
    evidence = list(
        EvidenceRevision.objects.filter(proposal_links__proposal=proposal)
        .select_related("source")
        .order_by("source_id", "revision")
    )
    figures = cited_figures(proposal.fields.get("content") or {})
    found: set[str] = set()
    for revision in evidence:  # attributes for the template only
        pretty = json.dumps(revision.content, indent=2, sort_keys=True, ensure_ascii=False)
        revision.pretty_content = pretty  # type: ignore[attr-defined]
        revision.rows = evidence_rows(revision.content, figures)  # type: ignore[attr-defined]
        revision.link = external_link(revision.source.external_ref)  # type: ignore[attr-defined]
        found |= found_figures(figures, revision.rows)  # type: ignore[attr-defined]
    conflicts = dedupe_conflicts(proposal)
    rows = conflict_rows(conflicts, decidable=needing(request.user, conflicts.proposals))
    panel = _panel_context(request, proposal)
    context = {
        "proposal": proposal,
        "summary": plain_language(proposal, memory),
        # Against the revision the proposal was made on: the change as it was decided, even once applied.
        "diff": diff_rows(proposal, memory_at_revision(memory=memory, revision=proposal.base_revision)),
        "evidence": evidence,
        "figures": [(figure.text, figure.text in found) for figure in figures],
        "decisions": decision_history(proposal),
        "history": memory_history(memory=memory) if memory else [],
        "conflicts": rows,
        "admission": admission_rows(proposal),
        "together": _together_context(request, proposal, rows, panel),
        **panel,
    }
    return render(request, "reviews/proposal.html", context)


@login_required
@require_POST
def decide(request, proposal_id):
    proposal = _proposal_or_404(request, proposal_id)
    form = DecisionForm(request.POST, owners=representable_owners(request.user, proposal))
    error = None
    if form.is_valid():
        try:
            record_decision(
                actor=request.user,
                proposal_id=proposal.pk,
                channel=ReviewDecision.Channel.UI,
                **form.cleaned_data,
            )
        except DomainError as refusal:
            error = refusal.detail
    elif "represented_owner" in form.errors:
        error = "Nothing was recorded: choose whom you decide for from the list."
    else:
        error = "Choose a decision and give a reason."
    proposal.refresh_from_db()
    if not request.htmx:
        messages.add_message(
            request, messages.ERROR if error else messages.SUCCESS, error or "Decision recorded."
        )
        return redirect("reviews:proposal", proposal_id=proposal.pk)
    context = _panel_context(request, proposal, form=form, error=error)
    # Out-of-band: the decisions list updates along with the panel.
    context.update(oob=True, decisions=decision_history(proposal))
    return render(request, "reviews/_review_panel.html", context)


@login_required
@require_POST
def decide_together_view(request, proposal_id):
    proposal = _proposal_or_404(request, proposal_id)
    form = DecideTogetherForm(request.POST, user=request.user)
    if not form.is_valid():
        errors = "; ".join(str(error) for errors in form.errors.values() for error in errors)
        messages.error(request, f"Nothing was recorded: {errors}")
        return redirect("reviews:proposal", proposal_id=proposal.pk)
    data = form.cleaned_data
    items = [TogetherItem(pk, digest, data["others_decision"]) for pk, digest in data["others"]]
    if data["decision"]:
        items.insert(0, TogetherItem(proposal.pk, data["action_digest"], data["decision"]))
    try:
        decisions = decide_together(
            actor=request.user,
            proposal_id=proposal.pk,
            items=items,
            reason=data["reason"],
            represented_owner=data["represented_owner"],
        )
    except DomainError as refusal:  # DecidedTogetherRefused names the proposal and why
        messages.error(request, f"Nothing was recorded. {refusal.detail}")
    else:
        messages.success(request, f"Recorded {len(decisions)} decisions, one per proposal.")
    return redirect("reviews:proposal", proposal_id=proposal.pk)


@login_required
@require_POST
def bulk_approve_view(request):
    form = BulkApproveForm(request.POST, user=request.user)
    if not form.is_valid():
        messages.error(request, "Select proposals and give one reason for all of them.")
        return redirect("reviews:queue")
    results = bulk_approve(
        actor=request.user,
        items=form.cleaned_data["items"],
        reason=form.cleaned_data["reason"],
        represented_owner=form.cleaned_data["represented_owner"],
    )
    approved = sum(1 for result in results if result.decision)
    messages.success(request, f"Approved {approved} of {len(results)} proposals.")
    for result in results:
        if result.error:
            messages.warning(request, f"{result.proposal_id}: {result.error.detail}")
    return redirect("reviews:queue")


@login_required
def dashboard(request):
    stats = reviewer_dashboard(user=request.user)
    bars, labels, ticks = outcome_bars(stats.outcomes_by_day)
    age_bars, age_height = hbars([(label, [("waiting", n)]) for label, n in stats.waiting_by_age])
    rule_bars, rule_height = hbars(
        [(row["rule"], [("waiting", row["waiting"]), ("decided", row["decided"])]) for row in stats.by_rule]
    )
    context = {
        "stats": stats,
        "bars": bars,
        "labels": labels,
        "ticks": ticks,
        "age": {"bars": age_bars, "height": age_height},
        "rules": {"bars": rule_bars, "height": rule_height},
    }
    return render(request, "reviews/dashboard.html", context)


@login_required
def dreaming_runs_page(request):
    runs = list(dreaming_runs_for_review(user=request.user)[:PAGE_SIZE])
    for run in runs:
        run.status = dreaming_run_status(run)  # type: ignore[attr-defined]  # for the template only
    return render(request, "reviews/dreaming_runs.html", {"runs": runs})


@login_required
def dreaming_run_page(request, run_id):
    """One run as one reviewable unit: its frozen window, its plan, and each action's diff."""
    try:
        run = dreaming_run_for_review(user=request.user, run_id=run_id)
    except DreamingRunNotFound:
        raise Http404("No such Dreaming run") from None
    proposals = {str(proposal.pk): proposal for proposal in run.proposals.all()}
    members = []
    for member in run.members:
        memory = memory_or_none(tenant_id=run.tenant_id, memory_id=member["memory_id"])
        frozen = memory_at_revision(memory=memory, revision=member["revision"])
        members.append({"frozen": member, "memory": memory, "statement": frozen.statement if frozen else ""})
    plan = []
    for action in run.plan:
        steps = []
        for proposal_id in action.get("proposals", []):
            proposal = proposals[proposal_id]
            memory = memory_or_none(tenant_id=run.tenant_id, memory_id=proposal.target_id)
            base = memory_at_revision(memory=memory, revision=proposal.base_revision)
            steps.append({"proposal": proposal, "diff": diff_rows(proposal, base)})
        plan.append({"action": action, "steps": steps})
    context = {"run": run, "status": dreaming_run_status(run), "members": members, "plan": plan}
    return render(request, "reviews/dreaming_run.html", context)


def _proposal_or_404(request, proposal_id):
    try:
        return proposal_for_review(user=request.user, proposal_id=proposal_id)
    except ProposalNotFound:
        raise Http404("No such proposal") from None


def _together_context(request, proposal, rows, panel: dict) -> dict | None:
    """The decide-together form, when a conflicting proposal still needs this person."""
    if not any(row.decidable for row in rows):
        return None
    pending = proposal.status == proposal.Status.PENDING_REVIEW
    this = pending and not panel["blocked"] and not panel["my_decision"]
    initial = {
        "action_digest": proposal.action_digest,
        "decision": ReviewDecision.Decision.APPROVE if this else "",
    }
    form = DecideTogetherForm(auto_id="together_%s", initial=initial, user=request.user)
    return {"this": this, "form": form}


def _panel_context(request, proposal, *, form=None, error=None) -> dict:
    """Say whether and why this person may decide, and prefill the form."""
    if is_submitter(request.user, proposal):
        blocked = "You submitted this proposal (through its agent), so you cannot decide it."
    elif not can_decide(request.user, proposal.tenant):
        blocked = "You can view this proposal but you do not have permission to decide it."
    else:
        blocked = None
    owners = representable_owners(request.user, proposal)
    initial = {"action_digest": proposal.action_digest, "represented_owner": owners[0][0]}
    mine = ReviewDecision.objects.filter(
        proposal=proposal, actor=request.user, action_digest=proposal.action_digest
    ).first()
    return {
        "proposal": proposal,
        "blocked": blocked,
        "my_decision": mine,
        "approvals_so_far": len(approving_decisions(proposal)),
        "error": error,
        "form": form if form is not None and error else DecisionForm(initial=initial, owners=owners),
    }


class ThrottledLoginView(LoginView):
    """Django's login, refusing one name from one address after repeated failures for a while.

    Kept over django-axes 8.3.1, tried with its cache handler, normalised names and this page
    (branch ``libs-axes-trial``): with the cache unreachable every sign-in there is a 500, as its
    backend reads the counter before authenticating, where this view fails open like the API
    throttle; its app migrates four tables the cache handler never writes; on the embedded
    default's local-memory cache it warns (axes.W001), which fails ``check --deploy``; and it
    answers the Nth failure itself with the lockout. The admin signs in here too (config/urls.py).
    """

    def post(self, request, *args, **kwargs):
        if self._failures() >= settings.CUSTODIAN_LOGIN_ATTEMPTS:
            form = self.get_form()
            form.is_valid()  # populate cleaned fields for the template, without counting a new failure
            form.errors.clear()
            form.add_error(None, "Too many failed sign-ins. Try again later.")
            response = self.render_to_response(self.get_context_data(form=form), status=429)
            response["Retry-After"] = str(settings.CUSTODIAN_LOGIN_LOCKOUT_SECONDS)  # at most this long
            tag_problem(response, "login_locked")  # as the refusal is audited
            return response
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        key = self._key()
        with suppress(RedisError, OSError):  # no cache, no lockout: never lock everyone out
            cache.add(key, 0, timeout=settings.CUSTODIAN_LOGIN_LOCKOUT_SECONDS)
            cache.incr(key)
        return super().form_invalid(form)

    def form_valid(self, form):
        with suppress(RedisError, OSError):
            cache.delete(self._key())
        return super().form_valid(form)

    def _failures(self) -> int:
        try:
            return cache.get(self._key(), 0)
        except (RedisError, OSError):
            return 0

    def _key(self) -> str:
        """One counter per name as the auth backend reads it (NFKC, stripped), case-folded, per address.

        "pm2 ", its full-width form and "pm2" sign in as the same person, so they share a counter.
        """
        raw = str(self.request.POST.get("username", ""))[:1000]
        name = (UsernameField().to_python(raw) or "").strip().casefold()[:150]
        hashed = hashlib.sha256(name.encode()).hexdigest()  # any character is safe in a cache key
        return f"login-failures:{hashed}:{client_address(self.request)}"
