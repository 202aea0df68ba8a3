"""Prometheus metrics of the HTTP layer: request counts and latencies by route and status."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)


class HttpMetrics:
    """One registry per app, so several apps in one process (tests) never share counters."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "toolrun_http_requests",
            "HTTP requests served",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "toolrun_http_request_duration_seconds",
            "Time from request start to the end of the response",
            ["method", "route", "status"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )

    def observe(self, *, method: str, route: str, status: int, seconds: float) -> None:
        labels = {"method": method, "route": route, "status": str(status)}
        self.requests.labels(**labels).inc()
        self.latency.labels(**labels).observe(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)
