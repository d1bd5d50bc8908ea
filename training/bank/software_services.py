"""Question templates, written by hand.

Software teams running services: API, sécurité, bases de données, logs.
"""

from __future__ import annotations

from training.templates import Template, entity, number, opposite, polarity, q, scope, t

DATABASES = entity(t("PostgreSQL"), t("MySQL"), t("SQLite"), t("MongoDB"))

TEMPLATES: tuple[Template, ...] = (
    q(
        "software.api_status",
        [
            "Quel code HTTP renvoyer quand {s} ?",
            "Code de statut HTTP adapté quand {s} ?",
            "Mon API doit répondre quel status code si {s} ?",
        ],
        ["Which HTTP status code should I return when {s}?", "What status code fits when {s}?"],
        {
            "s": entity(
                t("la ressource n'existe pas", "the resource does not exist"),
                t("l'utilisateur n'est pas authentifié", "the user is not authenticated"),
                t("le corps de la requête est invalide", "the request body is invalid"),
                t("le client envoie trop de requêtes", "the client sends too many requests"),
            )
        },
    ),
    q(
        "software.api_pagination",
        [
            "Comment paginer une API REST qui renvoie {n} éléments ?",
            "Pagination d'une API REST avec {n} résultats : quelle approche ?",
            "API REST qui doit lister {n} enregistrements : offset ou curseur ?",
        ],
        [
            "How should I paginate a REST API returning {n} items?",
            "Offset or cursor pagination for a REST API listing {n} records?",
        ],
        {"n": number(t("200"), t("50 000", "50,000"), t("10 millions", "10 million"))},
    ),
    q(
        "software.api_versioning",
        [
            "Comment versionner une API REST publique {m} ?",
            "Versionnage d'une API publique {m} : bonne pratique ?",
            "API REST publique : versionner {m}, comment s'y prendre ?",
        ],
        ["How do I version a public REST API {m}?", "What is the best practice to version a public API {m}?"],
        {
            "m": entity(
                t("dans l'URL", "in the URL"),
                t("par en-tête HTTP", "with an HTTP header"),
                t("par paramètre de requête", "with a query parameter"),
            )
        },
        [
            opposite(
                "Comment retirer une ancienne version d'une API REST publique versionnée {m} ?",
                "How do I retire an old version of a public REST API versioned {m}?",
            )
        ],
    ),
    q(
        "software.rate_limit",
        [
            "Comment limiter une API à {n} requêtes par minute et par client ?",
            "Rate limiting à {n} req/min par client : comment l'implémenter ?",
            "Mettre en place une limite de {n} requêtes par minute pour chaque client d'une API",
        ],
        [
            "How do I limit an API to {n} requests per minute per client?",
            "How do I implement rate limiting at {n} req/min per client?",
        ],
        {"n": number(t("60"), t("100"), t("1 000", "1,000"))},
    ),
    q(
        "software.jwt",
        [
            "Quelle durée de vie donner à un {k} ?",
            "Un {k} doit expirer au bout de combien de temps ?",
            "Expiration d'un {k} : quelle durée recommander ?",
        ],
        ["How long should a {k} live?", "What expiry should a {k} have?"],
        {
            "k": entity(
                t("access token JWT", "JWT access token"),
                t("refresh token", "refresh token"),
                t("cookie de session", "session cookie"),
            )
        },
        [
            scope("Où stocker un {k} côté navigateur ?", "Where should a {k} be stored in the browser?"),
            opposite(
                "Comment révoquer un {k} avant son expiration ?", "How do I revoke a {k} before it expires?"
            ),
        ],
    ),
    q(
        "software.vuln",
        [
            "Comment corriger une faille {f} dans une application web ?",
            "Faille {f} dans notre appli web : comment la corriger ?",
            "Se protéger d'une vulnérabilité {f}, comment ?",
        ],
        [
            "How do I fix a {f} vulnerability in a web application?",
            "How do we protect our web app against {f}?",
        ],
        {"f": entity(t("XSS"), t("injection SQL", "SQL injection"), t("CSRF"), t("SSRF"))},
        [
            scope(
                "Comment détecter automatiquement une faille {f} dans la CI ?",
                "How do I detect a {f} vulnerability automatically in CI?",
            )
        ],
    ),
    q(
        "software.cve",
        [
            "Notre image Docker contient la CVE-{y}-{n}, faut-il la corriger en urgence ?",
            "CVE-{y}-{n} détectée dans l'image Docker : c'est urgent ?",
            "Le scanner remonte CVE-{y}-{n} sur notre image, quelle priorité ?",
        ],
        [
            "Our Docker image has CVE-{y}-{n}: must we patch it urgently?",
            "The scanner flags CVE-{y}-{n} in our image: how urgent is it?",
        ],
        {"y": number(t("2023"), t("2024")), "n": number(t("3094"), t("44487"), t("6387"))},
    ),
    q(
        "software.db_backup",
        [
            "Comment sauvegarder une base {d} en production sans interruption ?",
            "Backup à chaud d'une base {d} en prod : comment ?",
            "Faire une sauvegarde d'une base {d} de production sans couper le service",
        ],
        [
            "How do I back up a production {d} database without downtime?",
            "How do I take a hot backup of a {d} database in production?",
        ],
        {"d": DATABASES},
        [
            opposite(
                "Comment restaurer une sauvegarde de base {d} en production ?",
                "How do I restore a {d} database backup in production?",
            )
        ],
    ),
    q(
        "software.db_index",
        [
            "Quand faut-il {a} un index sur une table {d} ?",
            "Sur {d}, dans quels cas {a} un index ?",
            "Table {d} : à quel moment {a} un index ?",
        ],
        ["When should I {a} an index on a {d} table?", "In {d}, when does it make sense to {a} an index?"],
        {
            "a": polarity(t("ajouter", "add"), t("supprimer", "drop")),
            "d": entity(t("PostgreSQL"), t("MySQL")),
        },
    ),
    q(
        "software.logs",
        [
            "Combien de temps conserver les logs applicatifs {k} ?",
            "Durée de rétention des logs {k} d'une application ?",
            "Logs {k} : on les garde combien de temps ?",
        ],
        ["How long should application logs {k} be kept?", "What retention period for {k} application logs?"],
        {
            "k": entity(
                t("contenant des données personnelles", "containing personal data"),
                t("d'accès", "of user access"),
                t("de sécurité", "of security events"),
            )
        },
        [scope("Comment anonymiser les logs applicatifs {k} ?", "How do I anonymize application logs {k}?")],
    ),
    q(
        "software.deploy_key",
        [
            "Comment {a} une clé SSH de déploiement sur {g} ?",
            "{g} : {a} une deploy key, comment faire ?",
            "Quelle procédure pour {a} une clé de déploiement SSH dans {g} ?",
        ],
        ["How do I {a} an SSH deploy key on {g}?", "What is the procedure to {a} a deploy key in {g}?"],
        {"a": polarity(t("ajouter", "add"), t("révoquer", "revoke")), "g": entity(t("GitHub"), t("GitLab"))},
    ),
    q(
        "software.online_migration",
        [
            "Comment faire une migration de schéma sans interruption de service sur {d} ?",
            "Migration de schéma {d} sans downtime : quelle méthode ?",
            "Modifier le schéma d'une base {d} en production sans coupure, comment ?",
        ],
        [
            "How do I run a zero-downtime schema migration on {d}?",
            "How can I change a production {d} schema without downtime?",
        ],
        {"d": entity(t("PostgreSQL"), t("MySQL"), t("MongoDB"))},
        [
            opposite(
                "Comment annuler une migration de schéma ratée sur {d} en production ?",
                "How do I roll back a failed schema migration on {d} in production?",
            )
        ],
    ),
)
