"""A fake of the few GitHub REST endpoints the sticky PR comment uses, as a real HTTP server.

PyGithub is pointed at it with ``base_url=server.api_url`` (an Enterprise-style ``/api/v3``
prefix by default, like ``GITHUB_API_URL`` on GitHub Enterprise Server). It paginates with
``Link`` headers like GitHub, checks the token, and can refuse writes with 403 per PR.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.recording import RecordingServer, Reply, Request

BOT = {"login": "github-actions[bot]", "type": "Bot"}
HUMAN = {"login": "octocat", "type": "User"}


@dataclass
class _State:
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    commit_pulls: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    next_id: int = 1000


class FakeGitHub(RecordingServer):
    def __init__(self, *, token: str = "ghs_fake_token", prefix: str = "/api/v3",
                 owner: str = "acme", repo: str = "agent") -> None:
        super().__init__()
        self.token = token
        self.prefix = prefix
        self.full_name = f"{owner}/{repo}"
        self.state = _State()
        self.forbidden_prs: set[int] = set()  # 403 on every call about these PRs
        self.read_only = False  # 403 on every write
        # None: a workflow/installation token (``GET /user`` is 403, it writes as the bot);
        # a login: a personal token of that user
        self.pat_login: str | None = None
        # a GitHub App's installation token: ``GET /user`` is 403 and it writes as this login
        self.app_login: str | None = None

    @property
    def api_url(self) -> str:
        return self.url + self.prefix

    # ------------------------------------------------------------------ test set-up

    def _comment(self, number: int, body: str, user: dict[str, str]) -> dict[str, Any]:
        self.state.next_id += 1
        cid = self.state.next_id
        return {
            "id": cid,
            "body": body,
            "user": dict(user),
            "url": f"{self.api_url}/repos/{self.full_name}/issues/comments/{cid}",
            "html_url": f"https://github.example/{self.full_name}/pull/{number}#issuecomment-{cid}",
            "issue_url": f"{self.api_url}/repos/{self.full_name}/issues/{number}",
        }

    def seed(self, number: int, count: int, body: str = "LGTM", user: dict | None = None) -> None:
        with self.lock:
            bucket = self.state.comments.setdefault(number, [])
            for i in range(count):
                bucket.append(self._comment(number, f"{body} {i}", user or HUMAN))

    def add_comment(self, number: int, body: str, user: dict | None = None) -> dict[str, Any]:
        with self.lock:
            c = self._comment(number, body, user or BOT)
            self.state.comments.setdefault(number, []).append(c)
            return c

    def set_commit_pulls(self, sha: str, numbers: list[int], state: str = "open") -> None:
        self.state.commit_pulls[sha] = [
            {"number": n, "state": state, "url": f"{self.api_url}/repos/{self.full_name}/pulls/{n}"}
            for n in numbers
        ]

    def comments(self, number: int) -> list[dict[str, Any]]:
        with self.lock:
            return [dict(c) for c in self.state.comments.get(number, [])]

    # ------------------------------------------------------------------ serving

    def _page(self, req: Request, items: list[dict[str, Any]]) -> Reply:
        per_page = max(1, min(int(req.query.get("per_page", "30")), 100))
        page = max(1, int(req.query.get("page", "1")))
        chunk = items[(page - 1) * per_page: page * per_page]
        last = max(1, -(-len(items) // per_page))
        links = []
        base = f"{self.url}{req.path}?per_page={per_page}"
        if page < last:
            links.append(f'<{base}&page={page + 1}>; rel="next"')
            links.append(f'<{base}&page={last}>; rel="last"')
        if page > 1:
            links.append(f'<{base}&page=1>; rel="first"')
            links.append(f'<{base}&page={page - 1}>; rel="prev"')
        headers = {"Link": ", ".join(links)} if links else {}
        return Reply(200, chunk, headers)

    def handle(self, req: Request) -> Reply:
        if req.headers.get("authorization") != f"token {self.token}" and req.headers.get(
            "authorization"
        ) != f"Bearer {self.token}":
            return Reply(401, {"message": "Bad credentials"})
        if req.path == self.prefix + "/user" and req.method == "GET":
            if self.pat_login is None:
                return Reply(403, {"message": "Resource not accessible by integration"})
            return Reply(200, {"login": self.pat_login, "type": "User", "id": 4242})
        if not req.path.startswith(self.prefix + "/repos/" + self.full_name):
            return Reply(404, {"message": "Not Found"})
        rest = req.path[len(self.prefix + "/repos/" + self.full_name):]
        write = req.method in ("POST", "PATCH", "PUT", "DELETE")
        if write and self.read_only:
            return Reply(403, {"message": "Resource not accessible by integration"})

        m = re.fullmatch(r"/issues/(\d+)/comments", rest)
        if m:
            number = int(m.group(1))
            if number in self.forbidden_prs:
                return Reply(403, {"message": "Resource not accessible by integration"})
            if req.method == "GET":
                return self._page(req, self.state.comments.get(number, []))
            if req.method == "POST":
                author = BOT if self.pat_login is None else {"login": self.pat_login,
                                                             "type": "User"}
                if self.app_login is not None:
                    author = {"login": self.app_login, "type": "Bot"}
                comment = self._comment(number, req.body["body"], author)
                self.state.comments.setdefault(number, []).append(comment)
                return Reply(201, comment)
        m = re.fullmatch(r"/issues/comments/(\d+)", rest)
        if m and req.method == "PATCH":
            cid = int(m.group(1))
            for number, bucket in self.state.comments.items():
                for comment in bucket:
                    if comment["id"] == cid:
                        # like GitHub: a token that may write the PR may edit anyone's comment
                        if number in self.forbidden_prs:
                            return Reply(403, {"message": "Resource not accessible"})
                        comment["body"] = req.body["body"]
                        return Reply(200, comment)
            return Reply(404, {"message": "Not Found"})
        m = re.fullmatch(r"/commits/([0-9a-f]+)/pulls", rest)
        if m and req.method == "GET":
            return self._page(req, self.state.commit_pulls.get(m.group(1), []))
        return Reply(404, {"message": "Not Found"})


def parse_outputs(text: str) -> dict[str, str]:
    """Read a $GITHUB_OUTPUT file the way the runner does (name=value and heredoc blocks)."""
    out: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            end = lines.index(delim, i + 1)
            out[name] = "\n".join(lines[i + 1:end])
            i = end + 1
            continue
        name, value = line.split("=", 1)
        out[name] = value
        i += 1
    return out
