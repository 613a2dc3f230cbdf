"""The payment service from Python's standard library alone, against the sandbox.

Pays a session on the hosted form, verifies the urlOk token, receives the AUTHORISATION and REFUND
webhooks, refunds, and walks a listing by cursor. Settings come from the environment; the defaults
match `docker run --network host IMAGE --host 127.0.0.1 --port 4010 --webhook-url
http://127.0.0.1:3000/webhooks`. Exits 0 when every step checked out, 1 with a message otherwise.
"""

import base64
import datetime
import hashlib
import hmac
import json
import os
import queue
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SANDBOX_URL = os.environ.get("SANDBOX_URL", "http://127.0.0.1:4010").rstrip("/")
API_KEY = os.environ.get("SANDBOX_API_KEY", "sk_test_sandbox")
WEBCODE = os.environ.get("SANDBOX_WEBCODE", "SANDBOX")
CLIENT_SECRET = os.environ.get("SANDBOX_CLIENT_SECRET", "cs_test_sandbox")
WEBHOOK_HOST = os.environ.get("WEBHOOK_HOST", "127.0.0.1")
WEBHOOK_PORT = int(os.environ.get("WEBHOOK_PORT", "3000"))
WAIT_SECONDS = float(os.environ.get("WAIT_SECONDS", "15"))
API = f"{SANDBOX_URL}/external/v1/test"  # the Test path family; Live is /external/v1


class Failed(Exception):
    """A step did not give what the service promises."""


def check(condition, message):
    if not condition:
        raise Failed(message)


# --- The API: JSON over HTTP, the X-API-KEY header, the webcode in every body and query ---


def call(method, path, body=None, query=None):
    url = f"{API}{path}?" + urllib.parse.urlencode({"webcode": WEBCODE, **(query or {})})
    headers = {"X-API-KEY": API_KEY, "Accept": "application/json"}
    data = None
    if body is not None:
        data = json.dumps({"webcode": WEBCODE, **body}).encode()
        headers["Content-Type"] = "application/json"
        headers["Idempotency-Key"] = str(uuid.uuid4())  # one per logical write; reuse it on a retry
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            envelope = json.load(response)
    except urllib.error.HTTPError as error:  # the failure envelope: { success: false, error: {...} }
        try:
            failure = json.load(error).get("error", {})
        except ValueError:  # not the service's answer (a proxy's page, say)
            failure = {}
        raise Failed(f"{method} {path}: {error.code} {failure.get('code')} {failure.get('message')}") from None
    check(envelope.get("success") is True, f"{method} {path}: no success envelope")
    return envelope["data"]


# --- The hosted form: a POST of its fields, answered by a 303 to urlOk or urlKo ---


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # the 303 is the answer we want to read, not follow


browser = urllib.request.build_opener(NoRedirect)


def submit_form(payment_url, fields):
    """POSTs the form's fields; returns the redirect's Location."""
    browser.open(payment_url, timeout=30).read()  # the customer opens the page: the 300 s start
    data = urllib.parse.urlencode(fields).encode()
    try:
        browser.open(urllib.request.Request(payment_url, data=data, method="POST"), timeout=30).read()
    except urllib.error.HTTPError as answer:
        if answer.code == 303:
            return answer.headers["Location"]
        raise Failed(f"the form answered {answer.code}") from None
    raise Failed("the form answered a page, not a redirect (a field error or a declined card)")


def card_fields(holder_name):
    expiry_year = (datetime.date.today().year + 3) % 100
    return {
        "cardNumber": "4111111111111111",  # a Luhn-valid Visa test card
        "expiryMonth": "12",
        "expiryYear": f"{expiry_year:02d}",
        "cvc": "123",
        "holderName": holder_name,  # DECLINED, FRAUD, ERROR... fail; any other name pays
        "action": "pay",
    }


# --- The urlOk token: a JWT signed with HS256 and the Test client secret ---


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def verify_redirect_data(token):
    check(token.count(".") == 2, "data is not a JWS")
    header_b64, payload_b64, signature_b64 = token.split(".")
    header = json.loads(b64url_decode(header_b64))
    check(header.get("alg") == "HS256", f"unexpected algorithm {header.get('alg')}")  # never trust alg blindly
    expected = hmac.new(CLIENT_SECRET.encode(), f"{header_b64}.{payload_b64}".encode(), hashlib.sha256).digest()
    check(hmac.compare_digest(expected, b64url_decode(signature_b64)), "bad signature: not made with this client secret")
    return json.loads(b64url_decode(payload_b64))


# --- The webhook receiver: a local http.server answering 200 to every POST ---

events = queue.Queue()


class WebhookHandler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.end_headers()
        events.put(json.loads(body))

    def log_message(self, *args):
        pass  # keep the output to the steps


def wait_for_event(event_code, field, value):
    """The first event with this code and data[field] == value; others are ignored."""
    deadline = time.monotonic() + WAIT_SECONDS
    while (left := deadline - time.monotonic()) > 0:
        try:
            event = events.get(timeout=left)
        except queue.Empty:
            break
        if event.get("event_code") == event_code and event.get("data", {}).get(field) == value:
            return event["data"]
    raise Failed(f"no {event_code} webhook for {value} within {WAIT_SECONDS} s")


# --- The flow ---


def main():
    server = ThreadingHTTPServer((WEBHOOK_HOST, WEBHOOK_PORT), WebhookHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"webhooks on http://{WEBHOOK_HOST}:{WEBHOOK_PORT}/webhooks")
    try:
        flow()
    finally:
        server.shutdown()


def flow():
    order = "order-1042"
    session = call("POST", "/payment/session", {
        "amount": {"value": 2599, "currency": "EUR"},
        "urlOk": f"https://shop.example/paid?order={order}",
        "urlKo": f"https://shop.example/failed?order={order}",
        "customReference": order,
        "shopperLocale": "en-GB",
    })
    print(f"session {session['sessionId']}: {session['status']}")

    location = submit_form(session["paymentUrl"], card_fields("Jane Tester"))
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(location).query)
    check(location.startswith("https://shop.example/paid?") and "data" in query, f"not sent to urlOk: {location}")
    paid = verify_redirect_data(query["data"][0])
    check(paid["sessionId"] == session["sessionId"] and paid["amount"] == 2599, "the token is for another payment")
    print(f"urlOk data verified: {paid['paymentReference']} {paid['amount']} {paid['currency']} {paid['paymentStatus']}")

    # Webhooks are not signed: take one as a hint and ask the API before acting on it.
    authorised = wait_for_event("AUTHORISATION", "paymentReference", paid["paymentReference"])
    confirmed = call("GET", f"/payment/session/{session['sessionId']}")
    check(confirmed["status"] == "completed", f"session is {confirmed['status']}")
    print(f"webhook AUTHORISATION {authorised['paymentReference']} {authorised['customReference']}: session {confirmed['status']}")

    refund = call("POST", "/payment/refund", {
        "paymentReference": paid["paymentReference"],
        "amount": {"value": 2599, "currency": "EUR"},
        "reason": "Customer returned the order",
    })
    print(f"refund {refund['refundReference']}: {refund['status']}")
    refunded = wait_for_event("REFUND", "refundReference", refund["refundReference"])
    print(f"webhook REFUND {refunded['refundReference']}: {refunded['status']}")

    # A second customer presses Cancel on the form: a 303 to urlKo, which carries no data.
    other = call("POST", "/payment/session", {
        "amount": {"value": 1250, "currency": "EUR"},
        "urlOk": "https://shop.example/paid?order=order-1043",
        "urlKo": "https://shop.example/failed?order=order-1043",
    })
    location = submit_form(other["paymentUrl"], {"action": "cancel"})
    check(location == "https://shop.example/failed?order=order-1043", f"not sent to urlKo: {location}")
    print(f"session {other['sessionId']}: cancelled, sent to urlKo")

    # Every session, one per page: pass meta.cursor back until meta.hasMore is false.
    statuses, pages, cursor = [], 0, None
    while pages < 1000:  # bounded, whatever the server says
        page = call("GET", "/payment/sessions", query={"take": 1, **({"cursor": cursor} if cursor else {})})
        pages += 1
        statuses += [item["status"] for item in page["payments"]]
        if not page["meta"]["hasMore"]:
            break
        cursor = page["meta"]["cursor"]
    check(len(statuses) == page["meta"]["total"], f"listed {len(statuses)} of {page['meta']['total']} sessions")
    print(f"listed {len(statuses)} sessions in {pages} pages: {', '.join(statuses)}")


if __name__ == "__main__":
    try:
        main()
    except Failed as failure:
        raise SystemExit(f"FAILED: {failure}") from None
