import pytest

from codexwatch.core.classify import classify

CASES = [
    ("server_overloaded", "Selected model is at capacity. Please try a different model.", "capacity", None),
    ({"response_too_many_failed_attempts": {"http_status_code": 429}},
     "exceeded retry limit, last status: 429 Too Many Requests", "rate_limit", 429),
    ("usage_limit_exceeded", "You’ve hit your usage limit. Upgrade to Pro", "usage_limit", None),
    ("model_not_found", "The model `gpt-9` does not exist or you do not have access to it.",
     "model_unavailable", None),
    ({"http_connection_failed": {"http_status_code": 401}}, "unexpected status 401 Unauthorized: x",
     "auth", 401),
    ("internal_server_error", "We’re currently experiencing high demand", "server_error", None),
    ({"http_connection_failed": {"http_status_code": 503}}, "unexpected status 503 Service Unavailable",
     "server_error", 503),
    ("other", "stream disconnected before completion: stream closed before response.completed",
     "stream_disconnected", None),
    ("context_window_exceeded", "Codex ran out of room in the model's context window.", "context_window", None),
    # older variants, decided by the message
    ("other", "Reviewer model is at capacity. Please try a different model.", "capacity", None),
    ("other", "Error running remote compact task: Selected model is at capacity", "capacity", None),
    ({"model_cap": {"model": "gpt-5", "reset_after_seconds": 120}}, "Model gpt-5 is at capacity.", "capacity", None),
    ("unauthorized", "Your access token could not be refreshed", "auth", None),
    (None, "Selected model is at capacity. Please try a different model.", "capacity", None),
    ("other", "unexpected status 404 Not Found: model is not supported when using Codex", "model_unavailable", 404),
    ("sandbox_error", "sandbox error: denied", "other", None),
]


@pytest.mark.parametrize("info,message,expected,status", CASES)
def test_classification(info, message, expected, status):
    cls, http_status, unknown = classify(info, message)
    assert (cls, http_status, unknown) == (expected, status, False)


@pytest.mark.parametrize("info", ["quantum_flux", {"brand_new": {"x": 1}}, {"a": 1, "b": 2}, 42, ["x"]])
def test_unknown_info_is_other_and_flagged(info):
    cls, _, unknown = classify(info, "Selected model is at capacity.")
    assert cls == "other" and unknown


def test_info_decides_before_message():
    # a usage-limit 429 is not a rate limit, whatever the text says
    assert classify("usage_limit_exceeded", "429 Too Many Requests")[0] == "usage_limit"


def test_a_cause_from_codex_log_makes_a_new_turn_and_changes_no_other():
    from codexwatch.core.classify import with_logged_cause
    from codexwatch.core.models import Turn

    unrecorded = Turn(session_id="s", turn_id="t", file="f", outcome="failed", error_class="unrecorded")
    given = with_logged_cause(unrecorded, "Selected model is at capacity. Please try a different model.")
    assert given is not unrecorded and unrecorded.error_class == "unrecorded" and unrecorded.message is None
    assert given.error_class == "capacity" and given.message.startswith("Selected model")
    assert with_logged_cause(unrecorded, None) is unrecorded
    recorded = Turn(session_id="s", turn_id="u", file="f", outcome="failed", error_class="auth")
    assert with_logged_cause(recorded, "anything") is recorded
