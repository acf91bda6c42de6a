"""Shared state: the live configuration, the counters and the fault budget."""

from __future__ import annotations

import copy
import threading
from typing import Any, Optional

from .script import Plan, make_plan, select_script, steered_text


def new_stats() -> dict[str, Any]:
    return {
        "requests": {},
        "connections_opened": 0,
        "ws_connections": 0,
        "http_versions": {},
        "active_streams": 0,
        "streams_completed": 0,
        "streams_cancelled": 0,
        "tokens_sent": 0,
        "tokens_after_cancel": 0,
        "steers_accepted": 0,
        "steers_failed": 0,
        "faults_injected": 0,
        "last_request": None,
        "request_log": [],
    }


class State:
    def __init__(self, config: dict[str, Any]) -> None:
        self.lock = threading.Lock()
        self.startup_config = copy.deepcopy(config)
        self.config = copy.deepcopy(config)
        self.stats = new_stats()
        self.seen_clients: set = set()
        self.fault_remaining = self._initial_fault_remaining()

    def _initial_fault_remaining(self) -> int:
        if not self.config.get("fault"):
            return 0
        return int(self.config.get("fault_count", 1))

    def configure(self, updates: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            for k, v in updates.items():
                self.config[k] = v
            if "fault" in updates or "fault_count" in updates:
                self.fault_remaining = self._initial_fault_remaining()
            return copy.deepcopy(self.config)

    def reset(self) -> None:
        with self.lock:
            self.config = copy.deepcopy(self.startup_config)
            active = self.stats["active_streams"]
            self.stats = new_stats()
            self.stats["active_streams"] = active
            self.seen_clients = set()
            self.fault_remaining = self._initial_fault_remaining()

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return copy.deepcopy(self.stats)

    def get_config(self) -> dict[str, Any]:
        with self.lock:
            return copy.deepcopy(self.config)

    # -- counters ------------------------------------------------------------
    def record(self, endpoint: str, body: Any) -> None:
        with self.lock:
            s = self.stats
            s["requests"][endpoint] = s["requests"].get(endpoint, 0) + 1
            s["last_request"] = body
            log_ = s["request_log"]
            log_.append({"endpoint": endpoint, "body": body})
            if len(log_) > 50:
                del log_[: len(log_) - 50]

    def track_connection(self, scope: dict) -> None:
        client = scope.get("client")
        key = (tuple(client) if client else None, tuple(scope.get("server") or ()))
        with self.lock:
            hv = scope.get("http_version", "1.1")
            s = self.stats
            s["http_versions"][hv] = s["http_versions"].get(hv, 0) + 1
            if key not in self.seen_clients:
                self.seen_clients.add(key)
                s["connections_opened"] += 1

    def count(self, key: str) -> None:
        with self.lock:
            self.stats[key] += 1

    def stream_started(self) -> None:
        self.stats["active_streams"] += 1

    def stream_ended(self, completed: bool) -> None:
        self.stats["active_streams"] -= 1
        self.stats["streams_completed" if completed else "streams_cancelled"] += 1

    # -- faults --------------------------------------------------------------
    def take_fault(self, kind: str) -> tuple[Optional[str], dict[str, Any]]:
        """Consume one fault for a request of ``kind`` ("http", "ws_create", "ws_handshake")."""
        with self.lock:
            cfg = self.config
            fault = cfg.get("fault")
            if not fault or self.fault_remaining == 0:
                return None, cfg
            fault = str(fault)
            if (fault == "refuse_ws") != (kind == "ws_handshake"):
                return None, cfg
            if self.fault_remaining > 0:
                self.fault_remaining -= 1
            self.stats["faults_injected"] += 1
            return fault, cfg

    # -- scripted behaviour ----------------------------------------------------
    def plan(
        self,
        hay: str,
        body: dict[str, Any],
        *,
        fault: Optional[str],
        text_override: Optional[str] = None,
        stop: Any = None,
        max_tokens: Optional[int] = None,
    ) -> Plan:
        with self.lock:
            script = select_script(self.config, hay, text_override)
        if not body.get("tools"):
            script.tool_calls = []  # a model given no tools calls none
        return make_plan(script, hay, fault=fault, stop=stop, max_tokens=max_tokens)

    def steer_plan(self, steer_text: str, body: dict[str, Any]) -> Plan:
        """Plan of the successor of a steered response."""
        with self.lock:
            rules = self.config.get("rules") or []
            default_text = str(self.config.get("text") or "")
        override = steered_text(rules, default_text, steer_text)
        return self.plan(steer_text, body, fault=None, text_override=override)
