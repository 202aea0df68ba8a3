"""foundation: accounts, keys, ledger, check-ins, rate limits

Revision ID: 0001
Revises:
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from toolrun.db.base import UTCDateTime

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:

    op.create_table(
        "accounts",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=True),
        sa.Column("is_anonymous", sa.Boolean(), nullable=False),
        sa.Column("disabled", sa.Boolean(), nullable=False),
        sa.Column("balance", sa.Integer(), nullable=False),
        sa.Column("anonymous_spent", sa.Integer(), nullable=False),
        sa.Column("anonymous_limit", sa.Integer(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("registered_at", UTCDateTime(), nullable=True),
        sa.CheckConstraint(
            "anonymous_spent >= 0", name=op.f("ck_accounts_anonymous_spent_not_negative")
        ),
        sa.CheckConstraint("balance >= 0", name=op.f("ck_accounts_balance_not_negative")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_accounts")),
    )
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("account_id", sa.String(length=36), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=True),
        sa.Column("revoked_at", UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_api_keys_account_id_accounts")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
        sa.UniqueConstraint("key_hash", name=op.f("uq_api_keys_key_hash")),
    )
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_api_keys_account_id"), ["account_id"], unique=False)

    op.create_table(
        "check_ins",
        sa.Column("account_id", sa.String(length=36), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_check_ins_account_id_accounts")
        ),
        sa.PrimaryKeyConstraint("account_id", "day", name=op.f("pk_check_ins")),
    )
    op.create_table(
        "credit_ledger",
        sa.Column(
            "seq",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("account_id", sa.String(length=36), nullable=False),
        sa.Column("reason", sa.String(length=32), nullable=False),
        sa.Column("amount", sa.Integer(), nullable=False),
        sa.Column("balance_after", sa.Integer(), nullable=False),
        sa.Column("reference", sa.String(length=200), nullable=False),
        sa.Column("operation", sa.String(length=128), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint(
            "balance_after >= 0", name=op.f("ck_credit_ledger_balance_after_not_negative")
        ),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_credit_ledger_account_id_accounts")
        ),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_credit_ledger")),
        sa.UniqueConstraint("id", name=op.f("uq_credit_ledger_id")),
        sa.UniqueConstraint("reference", name=op.f("uq_credit_ledger_reference")),
    )
    with op.batch_alter_table("credit_ledger", schema=None) as batch_op:
        batch_op.create_index("ix_credit_ledger_account_seq", ["account_id", "seq"], unique=False)

    op.create_table(
        "rate_limit_windows",
        sa.Column("account_id", sa.String(length=36), nullable=False),
        sa.Column("window_start", UTCDateTime(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_rate_limit_windows_account_id_accounts")
        ),
        sa.PrimaryKeyConstraint("account_id", "window_start", name=op.f("pk_rate_limit_windows")),
    )


def downgrade() -> None:

    op.drop_table("rate_limit_windows")
    with op.batch_alter_table("credit_ledger", schema=None) as batch_op:
        batch_op.drop_index("ix_credit_ledger_account_seq")

    op.drop_table("credit_ledger")
    op.drop_table("check_ins")
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_api_keys_account_id"))

    op.drop_table("api_keys")
    op.drop_table("accounts")
