"""Accounts: creation with a first key and grant, registration of anonymous accounts, disabling."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import update

from toolrun.config import Settings
from toolrun.core import credits, keys
from toolrun.core.errors import Conflict, NotFound
from toolrun.db.engine import WriteSession
from toolrun.db.tables import Account


@dataclass(frozen=True)
class NewAccount:
    account: Account
    key: keys.NewKey


async def create_account(
    session: WriteSession,
    *,
    settings: Settings,
    now: datetime,
    name: str | None = None,
    anonymous: bool = False,
) -> NewAccount:
    """A new account with one API key and its first grant (signup, or the anonymous trial)."""
    account = Account(
        name=name,
        is_anonymous=anonymous,
        disabled=False,
        balance=0,
        anonymous_spent=0,
        anonymous_limit=settings.anonymous_credits if anonymous else 0,
        created_at=now,
        registered_at=None if anonymous else now,
    )
    session.add(account)
    await session.flush()
    if anonymous:
        await credits.grant(
            session,
            account_id=account.id,
            amount=settings.anonymous_credits,
            reason=credits.Reason.ANONYMOUS_TRIAL,
            reference=f"anonymous_trial:{account.id}",
            now=now,
        )
    else:
        await _grant_signup(session, account_id=account.id, settings=settings, now=now)
    key = await keys.create_key(session, account_id=account.id, now=now)
    await session.refresh(account)
    return NewAccount(account=account, key=key)


async def register(
    session: WriteSession, *, account_id: str, settings: Settings, now: datetime
) -> Account:
    """Turn an anonymous account into a registered one and grant the signup credits."""
    account = await _get(session, account_id)
    if not account.is_anonymous:
        raise Conflict(f"account {account_id} is already registered")
    await session.execute(
        update(Account)
        .where(Account.id == account_id)
        .values(is_anonymous=False, anonymous_spent=0, anonymous_limit=0, registered_at=now)
    )
    await _grant_signup(session, account_id=account_id, settings=settings, now=now)
    await session.refresh(account)
    return account


async def set_disabled(session: WriteSession, *, account_id: str, disabled: bool) -> Account:
    account = await _get(session, account_id)
    await session.execute(update(Account).where(Account.id == account_id).values(disabled=disabled))
    await session.refresh(account)
    return account


async def _grant_signup(
    session: WriteSession, *, account_id: str, settings: Settings, now: datetime
) -> None:
    await credits.grant(
        session,
        account_id=account_id,
        amount=settings.signup_credits,
        reason=credits.Reason.SIGNUP,
        reference=f"signup:{account_id}",
        now=now,
    )


async def _get(session: WriteSession, account_id: str) -> Account:
    account = await session.get(Account, account_id)
    if account is None:
        raise NotFound(f"account {account_id} not found")
    return account
