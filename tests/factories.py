"""Typed factories for test rows, with keyword overrides."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import update

from toolrun.config import Settings
from toolrun.core import accounts, keys
from toolrun.db.engine import Database
from toolrun.db.tables import Account


@dataclass(frozen=True)
class AccountWithKey:
    id: str
    key: str
    key_id: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


async def create_account(
    db: Database,
    settings: Settings,
    *,
    anonymous: bool = False,
    name: str | None = None,
    now: datetime | None = None,
    disabled: bool = False,
) -> AccountWithKey:
    async with db.write() as session:
        created = await accounts.create_account(
            session,
            settings=settings,
            now=now or datetime.now(UTC),
            name=name,
            anonymous=anonymous,
        )
        if disabled:
            await session.execute(
                update(Account).where(Account.id == created.account.id).values(disabled=True)
            )
    return AccountWithKey(id=created.account.id, key=created.key.raw, key_id=created.key.key.id)


async def create_key(
    db: Database,
    *,
    account_id: str,
    now: datetime | None = None,
    expires_in_days: int | None = None,
) -> keys.NewKey:
    async with db.write() as session:
        return await keys.create_key(
            session,
            account_id=account_id,
            now=now or datetime.now(UTC),
            expires_in_days=expires_in_days,
        )
