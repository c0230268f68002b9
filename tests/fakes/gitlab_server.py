"""A fake of the GitLab merge-request notes API (v4), as a real HTTP server.

Paginates with ``Link`` and ``X-Next-Page`` headers like GitLab, checks the ``PRIVATE-TOKEN``
header, answers ``GET /user`` with the token's user, and can refuse with 403 per merge
request or per note (``locked_notes``).
"""

from __future__ import annotations

import re
from typing import Any

from tests.fakes.recording import RecordingServer, Reply, Request


class FakeGitLab(RecordingServer):
    def __init__(self, *, token: str = "glpat-fake-token", project_id: str = "42") -> None:
        super().__init__()
        self.token = token
        self.project_id = project_id
        self.notes: dict[str, list[dict[str, Any]]] = {}
        self.commit_mrs: dict[str, list[dict[str, Any]]] = {}
        self.forbidden_mrs: set[str] = set()
        self.locked_notes: dict[int, int] = {}  # note id -> the status a PUT to it gets
        self.user = {"id": 77, "username": "neens-bot"}
        self.redirect_to = ""  # every call answers 302 to this URL
        self._next = 500

    @property
    def api_url(self) -> str:
        return self.url + "/api/v4"

    def _note(self, body: str, username: str, user_id: int = 5, system: bool = False
              ) -> dict[str, Any]:
        self._next += 1
        return {"id": self._next, "body": body, "system": system,
                "author": {"id": user_id, "username": username}}

    def add_note(self, iid: str, body: str, *, user_id: int = 5, username: str = "mallory",
                 system: bool = False) -> dict[str, Any]:
        with self.lock:
            note = self._note(body, username, user_id, system)
            self.notes.setdefault(iid, []).append(note)
            return note

    def seed(self, iid: str, count: int, body: str = "LGTM") -> None:
        with self.lock:
            bucket = self.notes.setdefault(iid, [])
            bucket.extend(self._note(f"{body} {i}", "alice") for i in range(count))

    def mr_notes(self, iid: str) -> list[dict[str, Any]]:
        with self.lock:
            return [dict(n) for n in self.notes.get(iid, [])]

    def handle(self, req: Request) -> Reply:
        if self.redirect_to:
            return Reply(302, None, {"Location": self.redirect_to + req.path})
        if req.headers.get("private-token") != self.token:
            return Reply(401, {"message": "401 Unauthorized"})
        if req.path == "/api/v4/user" and req.method == "GET":
            return Reply(200, dict(self.user))
        base = f"/api/v4/projects/{self.project_id}"
        if not req.path.startswith(base):
            return Reply(404, {"message": "404 Project Not Found"})
        rest = req.path[len(base):]
        m = re.fullmatch(r"/merge_requests/(\d+)/notes(?:/(\d+))?", rest)
        if m:
            iid, note_id = m.group(1), m.group(2)
            if iid in self.forbidden_mrs:
                return Reply(403, {"message": "403 Forbidden"})
            bucket = self.notes.setdefault(iid, [])
            if req.method == "GET" and note_id is None:
                per_page = max(1, min(int(req.query.get("per_page", "20")), 100))
                page = max(1, int(req.query.get("page", "1")))
                chunk = bucket[(page - 1) * per_page: page * per_page]
                more = page * per_page < len(bucket)
                headers = {"X-Page": str(page), "X-Next-Page": str(page + 1) if more else ""}
                if more:
                    query = "&".join(f"{k}={v}" for k, v in req.query.items() if k != "page")
                    headers["Link"] = f'<{self.url}{req.path}?{query}&page={page + 1}>; rel="next"'
                return Reply(200, chunk, headers)
            if req.method == "POST" and note_id is None:
                note = self._note(req.body["body"], self.user["username"], self.user["id"])
                bucket.append(note)
                return Reply(201, note)
            if req.method == "PUT" and note_id is not None:
                for note in bucket:
                    if str(note["id"]) == note_id:
                        if note["id"] in self.locked_notes:
                            return Reply(self.locked_notes[note["id"]], {"message": "refused"})
                        note["body"] = req.body["body"]
                        return Reply(200, note)
                return Reply(404, {"message": "404 Not found"})
        m = re.fullmatch(r"/repository/commits/([0-9a-f]+)/merge_requests", rest)
        if m and req.method == "GET":
            return Reply(200, self.commit_mrs.get(m.group(1), []))
        if re.fullmatch(r"/merge_requests/\d+", rest) and req.method == "GET":
            return Reply(200, {"iid": int(rest.rsplit("/", 1)[1])})
        return Reply(404, {"message": "404 Not Found"})
