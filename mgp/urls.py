from django.urls import path

from mgp.views import OPERATIONS, MgpCapabilitiesApi, MgpOpenApiApi, MgpOperationApi

urlpatterns = [
    path("capabilities", MgpCapabilitiesApi.as_view(), name="mgp-capabilities"),
    path("openapi.json", MgpOpenApiApi.as_view(), name="mgp-openapi"),
    path("initialize", MgpOperationApi.as_view(operation="initialize"), name="mgp-initialize"),
    *(
        path(op, MgpOperationApi.as_view(operation=op), name=f"mgp-{op.replace('/', '-')}")
        for op in OPERATIONS
    ),
]
