"""The checker shape the website and domain checkers share: camelCase JSON, a check, a summary."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

CheckStatus = Literal["pass", "warn", "fail", "info"]


class CamelModel(BaseModel):
    """A model whose JSON names are camelCase; Python names stay snake_case."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class Check(CamelModel):
    """One check of a checker: its outcome, the measured value and what to do about it."""

    id: str
    title: str
    status: CheckStatus
    value: Any = None
    detail: str
    recommendation: str | None = None


class Summary(CamelModel):
    """Counts of the checks and the score (each checker family documents its formula)."""

    status: Literal["pass", "warn", "fail"]
    score: float | None
    passed: int
    warnings: int
    failed: int
    info: int = 0
