"""The admission core: AdmissionReview dict in, AdmissionReview dict out (no flask, no threads; no I/O
but the one `--extended-resources translate` needs: its ResourceClaimTemplates applied through
`config.templates`, never on dryRun). `review(admission_review, snapshot, config, deadline=None)`; see
`review.py` and docs/webhook.md."""

from webhook.admission.config import AdmissionConfig
from webhook.admission.request import BadReview
from webhook.admission.review import ReviewInfo, review, review_with_info

__all__ = ["AdmissionConfig", "BadReview", "ReviewInfo", "review", "review_with_info"]
