"""Named schema migrations, applied in order, each once, each in its own transaction."""

from __future__ import annotations

MIGRATIONS: tuple[tuple[str, str], ...] = (
    (
        "0001_responses",
        """
        CREATE TABLE responses (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            key_hash TEXT NOT NULL,
            question TEXT NOT NULL,
            answer TEXT NOT NULL,
            metadata TEXT NOT NULL DEFAULT '{}',
            embedding BLOB,
            created_at TEXT NOT NULL,
            usage_count INTEGER NOT NULL DEFAULT 0,
            tenant TEXT NOT NULL,
            agent TEXT NOT NULL,
            project TEXT NOT NULL DEFAULT '',
            phase TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL CHECK (status IN ('auto', 'validated', 'obsolete')),
            source TEXT NOT NULL CHECK (source IN ('learned', 'staff', 'faq', 'document')),
            tags TEXT NOT NULL DEFAULT '[]',
            embedding_model TEXT,
            updated_at TEXT NOT NULL,
            last_used_at TEXT,
            expires_at TEXT
        );
        CREATE INDEX idx_responses_key_hash ON responses(key_hash);
        CREATE INDEX idx_responses_created_at ON responses(created_at);
        CREATE INDEX idx_responses_tenant_scope ON responses(tenant, agent, project, phase);
        """,
    ),
    (
        "0002_conversations",
        """
        CREATE TABLE conversations (
            id TEXT PRIMARY KEY,
            tenant TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE TABLE messages (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
            type TEXT NOT NULL,
            content TEXT NOT NULL,
            created_at TEXT NOT NULL,
            entry_id INTEGER,
            metadata TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX idx_messages_conversation ON messages(conversation_id, id);
        CREATE INDEX idx_conversations_tenant ON conversations(tenant);
        """,
    ),
    (
        "0003_lookups",
        """
        CREATE TABLE lookups (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            tenant TEXT NOT NULL,
            agent TEXT NOT NULL,
            project TEXT NOT NULL,
            phase TEXT NOT NULL,
            decision TEXT NOT NULL CHECK (decision IN ('direct', 'assisted', 'miss')),
            entry_id INTEGER,
            score REAL,
            tokens_saved INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL
        );
        CREATE INDEX idx_lookups_tenant_time ON lookups(tenant, created_at);
        """,
    ),
    (
        "0004_verified_hits",
        """
        ALTER TABLE lookups ADD COLUMN question TEXT;
        ALTER TABLE lookups ADD COLUMN verdict TEXT;
        ALTER TABLE lookups ADD COLUMN reason TEXT;
        ALTER TABLE lookups ADD COLUMN probability REAL;
        ALTER TABLE lookups ADD COLUMN verified_by TEXT;
        ALTER TABLE lookups ADD COLUMN review TEXT CHECK (review IN ('right', 'wrong'));
        ALTER TABLE lookups ADD COLUMN reviewed_by TEXT;
        ALTER TABLE lookups ADD COLUMN reviewed_at TEXT;
        CREATE INDEX idx_lookups_served ON lookups(tenant, decision, review);
        CREATE TABLE judgements (
            tenant TEXT NOT NULL,
            entry_id INTEGER NOT NULL,
            entry_key TEXT NOT NULL,
            question_key TEXT NOT NULL,
            serves INTEGER NOT NULL,
            reason TEXT NOT NULL,
            model TEXT NOT NULL,
            prompt_tokens INTEGER NOT NULL,
            completion_tokens INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (tenant, entry_id, entry_key, question_key)
        );
        """,
    ),
    (
        "0005_staff_console",
        """
        CREATE TABLE audit_events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            tenant TEXT NOT NULL,
            entry_id INTEGER NOT NULL,
            at TEXT NOT NULL,
            actor TEXT NOT NULL,
            action TEXT NOT NULL,
            before TEXT,
            after TEXT
        );
        CREATE INDEX idx_audit_tenant ON audit_events(tenant, id);
        CREATE INDEX idx_audit_entry ON audit_events(tenant, entry_id, id);
        CREATE INDEX idx_lookups_entry ON lookups(entry_id, id)
        """,
    ),
    (
        # Client corrections wait here for staff (memory/proposal.py has the rule); the audit event
        # that applies an accepted one names it.
        "0006_feedback_proposals",
        """
        CREATE TABLE feedback_proposals (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            tenant TEXT NOT NULL,
            entry_id INTEGER NOT NULL,
            conversation_id TEXT NOT NULL,
            message_id INTEGER NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('validate', 'correct', 'retire')),
            proposed_answer TEXT,
            base_question TEXT NOT NULL,
            base_answer TEXT NOT NULL,
            base_status TEXT NOT NULL,
            proposed_by TEXT NOT NULL,
            created_at TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'rejected')),
            decided_by TEXT,
            decided_at TEXT,
            reason TEXT,
            audit_event_id INTEGER,
            CHECK ((kind = 'correct') = (proposed_answer IS NOT NULL))
        );
        CREATE INDEX idx_proposals_tenant ON feedback_proposals(tenant, status, id);
        CREATE INDEX idx_proposals_message ON feedback_proposals(message_id, status);
        ALTER TABLE audit_events ADD COLUMN proposal_id INTEGER
        """,
    ),
    (
        # An import is committed in chunks so that answers' bookkeeping can interleave; its rows and
        # their audit events stay invisible (`pending_import` names the import) until one last
        # transaction publishes them, and a failed, cancelled or crashed import's rows are removed.
        "0007_chunked_imports",
        """
        ALTER TABLE responses ADD COLUMN pending_import TEXT;
        ALTER TABLE audit_events ADD COLUMN pending_import TEXT;
        CREATE INDEX idx_responses_pending ON responses(pending_import) WHERE pending_import IS NOT NULL;
        CREATE INDEX idx_audit_pending ON audit_events(pending_import) WHERE pending_import IS NOT NULL
        """,
    ),
    (
        # Other wordings of an entry's question (memory/variant.py). A variant has no scope of its
        # own: its key is made in its entry's scope, and it goes with its entry (cascade), an
        # unfinished import's entries included. `origin` is left unchecked: who may add a wording
        # grows with the ways of learning one.
        "0008_question_variants",
        """
        CREATE TABLE response_variants (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            response_id INTEGER NOT NULL REFERENCES responses(id) ON DELETE CASCADE,
            tenant TEXT NOT NULL,
            question TEXT NOT NULL,
            key_hash TEXT NOT NULL,
            embedding BLOB,
            embedding_model TEXT,
            status TEXT NOT NULL CHECK (status IN ('validated', 'learned')),
            origin TEXT NOT NULL,
            confirmations INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX idx_variants_key ON response_variants(tenant, key_hash);
        CREATE INDEX idx_variants_response ON response_variants(response_id);
        ALTER TABLE lookups ADD COLUMN variant_id INTEGER
        """,
    ),
    (
        # Every call to the LLM judge, whatever it gave (verify/judge.py), for its cost in the stats:
        # `judgements` is a cache and counts neither the calls without a verdict nor a pair judged
        # twice at once. `cost` is the upstream's own figure, when it sends one. The verdicts
        # cached before this migration are counted as the calls they were.
        "0009_judge_calls",
        """
        CREATE TABLE judge_calls (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            tenant TEXT NOT NULL,
            model TEXT NOT NULL,
            outcome TEXT NOT NULL CHECK (outcome IN ('yes', 'no', 'unclear', 'failed')),
            prompt_tokens INTEGER NOT NULL,
            completion_tokens INTEGER NOT NULL,
            cost REAL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX idx_judge_calls_tenant ON judge_calls(tenant);
        INSERT INTO judge_calls (tenant, model, outcome, prompt_tokens, completion_tokens, cost, created_at)
            SELECT tenant, model, CASE WHEN serves THEN 'yes' ELSE 'no' END, prompt_tokens,
                completion_tokens, NULL, created_at
            FROM judgements ORDER BY created_at
        """,
    ),
)
