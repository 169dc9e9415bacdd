from csp.constants import NONE, SELF, UNSAFE_INLINE
from csp.decorators import csp
from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from erasure.api import ErasureCertificateApi, ErasureCollectionApi, ErasureDetailApi
from executor.api import ReceiptDetailApi, ReceiptListApi
from health.views import LivezApi, ReadyzApi
from maintenance.dreaming.api import DreamingRunListApi
from memory_core.api import MemoryDetailApi, RecallFeedbackApi, RecallSearchApi
from memory_core.audit_api import AuditEventListApi
from metrics.views import MetricsApi
from observations.api import ObservationApi, ObservationBatchApi
from proposals.api import ProposalAmendApi, ProposalCollectionApi, ProposalDetailApi, ProposalWithdrawApi
from proposals.batch_api import ProposalBatchSubmitApi
from provenance.api import (
    EvidenceDetailApi,
    EvidenceInvalidateApi,
    EvidenceRegisterApi,
    EvidenceRevisionAddApi,
)
from reviews.api import DecisionCreateApi, ReviewQueueApi
from reviews.views import ThrottledLoginView

# Swagger UI's page boots with an inline script and inline styles.
SWAGGER_UI_POLICY = {
    "default-src": [SELF],
    "script-src": [SELF, UNSAFE_INLINE],
    "style-src": [SELF, UNSAFE_INLINE],
    "img-src": [SELF, "data:"],
    "frame-ancestors": [NONE],
}

api_v1 = [
    path("evidence/", EvidenceRegisterApi.as_view(), name="evidence-register"),
    path("evidence/<uuid:evidence_id>/", EvidenceDetailApi.as_view(), name="evidence-detail"),
    path(
        "evidence/<uuid:evidence_id>/revisions/",
        EvidenceRevisionAddApi.as_view(),
        name="evidence-revision-add",
    ),
    path(
        "evidence/<uuid:evidence_id>/revisions/<int:revision>/invalidate/",
        EvidenceInvalidateApi.as_view(),
        name="evidence-invalidate",
    ),
    path("dreaming/runs/", DreamingRunListApi.as_view(), name="dreaming-runs"),
    path("erasures/", ErasureCollectionApi.as_view(), name="erasures"),
    path("erasures/<uuid:erasure_id>/", ErasureDetailApi.as_view(), name="erasure-detail"),
    path(
        "erasures/<uuid:erasure_id>/certificate",
        ErasureCertificateApi.as_view(),
        name="erasure-certificate",
    ),
    path("observations/", ObservationApi.as_view(), name="observations"),
    path("observations/batch/", ObservationBatchApi.as_view(), name="observations-batch"),
    path("proposals/", ProposalCollectionApi.as_view(), name="proposals"),
    path("proposals/batch", ProposalBatchSubmitApi.as_view(), name="proposals-batch"),
    path("proposals/<uuid:proposal_id>/", ProposalDetailApi.as_view(), name="proposal-detail"),
    path(
        "proposals/<uuid:proposal_id>/withdraw/",
        ProposalWithdrawApi.as_view(),
        name="proposal-withdraw",
    ),
    path("proposals/<uuid:proposal_id>/amend/", ProposalAmendApi.as_view(), name="proposal-amend"),
    path("proposals/<uuid:proposal_id>/decisions/", DecisionCreateApi.as_view(), name="proposal-decide"),
    path("reviews/queue/", ReviewQueueApi.as_view(), name="review-queue"),
    path("memories/<uuid:memory_id>/", MemoryDetailApi.as_view(), name="memory-detail"),
    path("recall/search", RecallSearchApi.as_view(), name="recall-search"),
    path("recall/<uuid:recall_id>/feedback", RecallFeedbackApi.as_view(), name="recall-feedback"),
    path("audit/events/", AuditEventListApi.as_view(), name="audit-events"),
    path("receipts/", ReceiptListApi.as_view(), name="receipts"),
    path("receipts/<uuid:receipt_id>/", ReceiptDetailApi.as_view(), name="receipt-detail"),
]

urlpatterns = [
    path("", RedirectView.as_view(url="/review/", permanent=False)),
    # Browsers ask for it on every page the admin draws (ours link the icon themselves).
    path("favicon.ico", RedirectView.as_view(url=static("reviews/favicon.svg"), permanent=True)),
    # The admin's own login has no lockout: staff sign in through the one that has.
    path("admin/login/", RedirectView.as_view(pattern_name="login", query_string=True)),
    path("admin/", admin.site.urls),
    path("accounts/login/", ThrottledLoginView.as_view(), name="login"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("review/", include("reviews.urls")),
    path("review/", include("executor.urls")),
    path("review/", include("notifications.urls")),
    path("api/v1/", include(api_v1)),
    path("mgp/", include("mgp.urls")),
    path("livez", LivezApi.as_view(), name="livez"),
    path("healthz", LivezApi.as_view(), name="healthz"),  # the older name balancers poll
    path("readyz", ReadyzApi.as_view(), name="readyz"),
    path("metrics", MetricsApi.as_view(), name="metrics"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", csp(SWAGGER_UI_POLICY)(SpectacularSwaggerView.as_view(url_name="schema")), name="docs"),
]

handler404 = "core.api.problems.not_found_handler"
handler500 = "core.api.problems.server_error_handler"
