"""toolrun's HTTP client: typed sync and async clients, retries, polling, resumable uploads.

    from toolrun.client import Client

    with Client() as client:                      # TOOLRUN_BASE_URL, TOOLRUN_API_KEY
        result = client.run("dns-lookup", domain="example.com", types=["A", "MX"])

Standalone: it talks HTTP only and imports nothing else of toolrun.
"""

from toolrun.client.aio import AsyncClient
from toolrun.client.errors import (
    ApiError,
    AuthError,
    BadRequest,
    Conflict,
    InsufficientCredits,
    JobFailed,
    NetworkError,
    NotFound,
    RateLimited,
    ServerError,
)
from toolrun.client.flows import RetryPolicy
from toolrun.client.models import (
    Asset,
    CheckIn,
    ChunkProgress,
    CreditSummary,
    Job,
    JobError,
    LedgerEntry,
    LedgerPage,
    Share,
    Tool,
    UploadSession,
)
from toolrun.client.sync import Client

__all__ = [
    "ApiError",
    "Asset",
    "AsyncClient",
    "AuthError",
    "BadRequest",
    "CheckIn",
    "ChunkProgress",
    "Client",
    "Conflict",
    "CreditSummary",
    "InsufficientCredits",
    "Job",
    "JobError",
    "JobFailed",
    "LedgerEntry",
    "LedgerPage",
    "NetworkError",
    "NotFound",
    "RateLimited",
    "RetryPolicy",
    "ServerError",
    "Share",
    "Tool",
    "UploadSession",
]
