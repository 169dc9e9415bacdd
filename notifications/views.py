"""Each signed-in person's own email preference page (the admin offers the same to staff)."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from notifications.forms import EmailPreferenceForm
from notifications.selectors import email_settings
from notifications.services import set_email_preference

CONFIRMATIONS = {
    "immediate": "Saved: you get an email for each proposal that awaits you.",
    "digest": "Saved: you get one email a day listing what awaits you.",
    "off": "Saved: you get no email about reviews.",
}


@login_required
def email_preference(request: HttpRequest) -> HttpResponse:
    """Show and change how the signed-in person hears of reviews; nobody else's."""
    if request.method == "POST":
        form = EmailPreferenceForm(request.POST)
        if form.is_valid():
            mode = form.cleaned_data["mode"]
            set_email_preference(user=request.user, mode=mode)
            messages.success(request, CONFIRMATIONS[mode])
            return redirect("notifications:email-preference")
        status = 400
    else:
        form = EmailPreferenceForm(initial={"mode": email_settings(user=request.user).mode})
        status = 200
    context = {
        "form": form,
        "settings": email_settings(user=request.user),
        "digest_hour": settings.CUSTODIAN_DIGEST_HOUR,
    }
    return render(request, "notifications/email_preference.html", context, status=status)
