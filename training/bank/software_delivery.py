"""Question templates, written by hand.

Software teams shipping code: déploiement, CI, revue de code, versions, outillage.
"""

from __future__ import annotations

from training.templates import Template, entity, extent, number, opposite, polarity, q, scope, t

PYTHONS = number(t("Python 3.9"), t("Python 3.11"), t("Python 3.12"), t("Python 3.13"))
CI = entity(t("GitHub Actions"), t("GitLab CI"), t("Jenkins"), t("CircleCI"))
CLOUDS = entity(
    t("Kubernetes"), t("AWS Lambda"), t("Google Cloud Run"), t("Heroku"), t("un VPS OVH", "an OVH VPS")
)

TEMPLATES: tuple[Template, ...] = (
    q(
        "software.deploy_target",
        [
            "Comment déployer une API Django sur {p} ?",
            "Déploiement d'une API Django sur {p} : comment faire ?",
            "Quelles étapes pour mettre en prod une API Django sur {p} ?",
        ],
        ["How do I deploy a Django API to {p}?", "What are the steps to ship a Django API on {p}?"],
        {"p": CLOUDS},
        [
            scope(
                "Combien coûte l'hébergement d'une API Django sur {p} ?",
                "How much does hosting a Django API on {p} cost?",
            ),
            opposite(
                "Comment retirer proprement une API Django de {p} ?",
                "How do I cleanly decommission a Django API from {p}?",
            ),
        ],
    ),
    q(
        "software.rollback",
        [
            "Comment faire un rollback d'un déploiement sur {p} ?",
            "Revenir à la version précédente après un déploiement raté sur {p}, comment ?",
            "{p} : comment annuler le dernier déploiement ?",
        ],
        ["How do I roll back a deployment on {p}?", "How do I revert to the previous release on {p}?"],
        {"p": entity(t("Kubernetes"), t("AWS Lambda"), t("Google Cloud Run"), t("Heroku"))},
    ),
    q(
        "software.ci_artifacts",
        [
            "Comment passer les artefacts d'un job à l'autre dans {c} pour un projet {l} ?",
            "{c} : partager le build d'un projet {l} entre deux jobs, comment ?",
            "Projet {l} sous {c} : comment réutiliser les artefacts d'un job précédent ?",
        ],
        [
            "How do I pass build artifacts between jobs in {c} for a {l} project?",
            "How can a {l} project reuse a previous job's artifacts in {c}?",
        ],
        {"l": entity(t("pip"), t("npm"), t("Maven"), t("Go")), "c": CI},
    ),
    q(
        "software.ci_matrix",
        [
            "Comment lancer les tests sur {v} et {w} en parallèle dans {c} ?",
            "{c} : tester sur {v} et {w} avec une matrice, comment ?",
            "Matrice de build {v} + {w} dans {c}, comment la déclarer ?",
        ],
        [
            "How do I run the tests on {v} and {w} in parallel in {c}?",
            "How do I set up a {v} + {w} build matrix in {c}?",
        ],
        {
            "v": number(t("Python 3.10"), t("Python 3.11")),
            "w": number(t("Python 3.12"), t("Python 3.13")),
            "c": entity(t("GitHub Actions"), t("GitLab CI")),
        },
    ),
    q(
        "software.ci_secret",
        [
            "Comment passer un secret à un job {c} sans l'afficher dans les logs ?",
            "{c} : utiliser un token secret dans un job sans qu'il apparaisse dans les logs ?",
            "Masquer un secret dans les logs d'un pipeline {c}, comment faire ?",
        ],
        [
            "How do I pass a secret to a {c} job without it showing in the logs?",
            "How do I keep a secret token out of {c} pipeline logs?",
        ],
        {"c": CI},
        [
            scope(
                "Comment faire tourner régulièrement les secrets utilisés par {c} ?",
                "How do I rotate the secrets used by {c} regularly?",
            )
        ],
    ),
    q(
        "software.review_size",
        [
            "Quelle taille maximale pour une merge request avant la revue de code ?",
            "Une pull request doit faire combien de lignes au max pour être bien relue ?",
            "À partir de combien de lignes une PR devient-elle trop grosse pour une revue ?",
        ],
        [
            "What is the maximum size of a pull request for a good code review?",
            "How many lines can a PR have before it is too big to review?",
        ],
        {},
        [
            scope(
                "Combien de relecteurs faut-il pour une pull request ?",
                "How many reviewers should a pull request have?",
            )
        ],
    ),
    q(
        "software.review_approve",
        [
            "Qui peut {a} une pull request sur la branche {b} ?",
            "Sur {b}, qui a le droit d'{a} une PR ?",
            "Droits pour {a} une merge request vers {b} : qui les a ?",
        ],
        ["Who can {a} a pull request on the {b} branch?", "Who is allowed to {a} a PR into {b}?"],
        {
            "a": polarity(t("approuver", "approve"), t("rejeter", "reject")),
            "b": entity(t("main"), t("release"), t("develop")),
        },
    ),
    q(
        "software.python_upgrade",
        [
            "Que faut-il vérifier avant de migrer un projet de {v} à {w} ?",
            "Migration {v} vers {w} : quels points de vigilance ?",
            "Passer de {v} à {w}, qu'est-ce qui peut casser ?",
        ],
        [
            "What should I check before moving a project from {v} to {w}?",
            "Upgrading from {v} to {w}: what can break?",
        ],
        {
            "v": number(t("Python 3.8"), t("Python 3.9"), t("Python 3.10")),
            "w": number(t("Python 3.11"), t("Python 3.12"), t("Python 3.13")),
        },
    ),
    q(
        "software.eol",
        [
            "Jusqu'à quand {v} reçoit-il des correctifs de sécurité ?",
            "Date de fin de support de {v} ?",
            "{v} est supporté jusqu'à quelle date ?",
        ],
        ["Until when does {v} get security fixes?", "When does {v} reach end of life?"],
        {
            "v": entity(
                t("Python 3.9"), t("Node.js 18"), t("Ubuntu 20.04"), t("Django 4.2"), t("PostgreSQL 12")
            )
        },
        [
            scope(
                "Comment migrer une application qui tourne encore sur {v} ?",
                "How do I migrate an application still running on {v}?",
            )
        ],
    ),
    q(
        "software.semver",
        [
            "Passer de la version {a} à {b}, c'est un changement majeur ou mineur en SemVer ?",
            "En versionnage sémantique, {a} vers {b} indique quel type de changement ?",
            "SemVer : que signifie un passage de {a} à {b} ?",
        ],
        [
            "In SemVer, is going from {a} to {b} a major or a minor change?",
            "What does a bump from {a} to {b} mean under semantic versioning?",
        ],
        {"a": number(t("1.4.2"), t("2.0.0"), t("0.9.1")), "b": number(t("1.5.0"), t("3.0.0"), t("1.0.0"))},
    ),
    q(
        "software.feature_flag",
        [
            "Comment {a} une fonctionnalité en production avec un feature flag ?",
            "Feature flag : comment {a} une fonctionnalité en prod ?",
            "Utiliser un feature flag pour {a} une fonctionnalité en production, comment ?",
        ],
        [
            "How do I {a} a feature in production with a feature flag?",
            "How do I use a feature flag to {a} a feature in prod?",
        ],
        {"a": polarity(t("activer", "enable"), t("désactiver", "disable"))},
        [
            scope(
                "Comment activer une fonctionnalité pour 5 % des utilisateurs avec un feature flag ?",
                "How do I enable a feature for 5% of users with a feature flag?",
            )
        ],
    ),
    q(
        "software.git_branch",
        [
            "Comment {a} une branche git {w} ?",
            "git : {a} une branche {w}, quelle commande ?",
            "Quelle commande pour {a} une branche {w} avec git ?",
        ],
        ["How do I {a} a git branch {w}?", "Which git command will {a} a branch {w}?"],
        {
            "a": polarity(t("supprimer", "delete"), t("restaurer", "restore")),
            "w": entity(t("locale", "locally"), t("distante", "on the remote")),
        },
    ),
    q(
        "software.oncall",
        [
            "Comment organiser une astreinte pour une équipe de {n} développeurs ?",
            "Astreinte dans une équipe de {n} devs : comment la mettre en place ?",
            "Quelle rotation d'astreinte pour {n} développeurs ?",
        ],
        [
            "How do I organize on-call for a team of {n} developers?",
            "What on-call rotation works for {n} developers?",
        ],
        {"n": number(t("3"), t("6"), t("12"))},
        [
            scope(
                "Comment rémunérer l'astreinte d'une équipe de {n} développeurs ?",
                "How should on-call be paid for a team of {n} developers?",
            )
        ],
    ),
    q(
        "software.lint_python",
        [
            "Comment configurer {o} pour un projet {v} ?",
            "Configuration de {o} sur un projet {v}, comment ?",
            "Mettre en place {o} dans un projet {v}",
        ],
        ["How do I configure {o} for a {v} project?", "How do I set up {o} in a {v} codebase?"],
        {"o": entity(t("ruff"), t("mypy"), t("black"), t("pytest")), "v": PYTHONS},
    ),
    q(
        "software.test_run",
        [
            "Comment lancer les tests {s} avec pytest ?",
            "pytest : exécuter les tests {s}, quelle commande ?",
            "Quelle commande pytest pour lancer les tests {s} ?",
        ],
        ["How do I run the tests {s} with pytest?", "Which pytest command runs the tests {s}?"],
        {
            "s": extent(
                t("d'un seul fichier", "of a single file"),
                t("de tout le projet", "of the whole project"),
                t("d'une seule fonction", "of a single function"),
            )
        },
    ),
    q(
        "software.coverage_gate",
        [
            "Comment faire échouer la CI si la couverture de tests passe sous {n} % ?",
            "Bloquer le pipeline quand le coverage descend sous {n} %, comment ?",
            "Seuil de couverture de {n} % dans la CI : comment l'imposer ?",
        ],
        [
            "How do I fail the CI build when test coverage drops below {n}%?",
            "How can the pipeline enforce a {n}% coverage threshold?",
        ],
        {"n": number(t("70"), t("80"), t("90"))},
    ),
    q(
        "software.docker_size",
        [
            "Comment réduire la taille d'une image Docker {l} ?",
            "Image Docker {l} trop lourde : comment l'alléger ?",
            "Optimiser le poids d'une image Docker pour une appli {l}",
        ],
        ["How do I shrink a {l} Docker image?", "My {l} Docker image is too big: how do I slim it down?"],
        {"l": entity(t("Python"), t("Node.js"), t("Java"), t("Go"))},
        [
            scope(
                "Comment scanner les vulnérabilités d'une image Docker {l} ?",
                "How do I scan a {l} Docker image for vulnerabilities?",
            )
        ],
    ),
    q(
        "software.required_reviews",
        [
            "Comment exiger {n} approbations avant de fusionner une PR sur GitHub ?",
            "GitHub : imposer {n} reviews validées avant le merge, comment ?",
            "Règle de protection de branche avec {n} approbations obligatoires, comment la configurer ?",
        ],
        [
            "How do I require {n} approvals before merging a PR on GitHub?",
            "How do I set a branch protection rule with {n} mandatory approvals?",
        ],
        {"n": number(t("1"), t("2"), t("3"))},
    ),
    q(
        "software.changelog",
        [
            "Comment générer automatiquement un changelog à partir des commits ?",
            "Changelog auto depuis l'historique git : quel outil ?",
            "Produire les notes de version à partir des messages de commit, comment ?",
        ],
        [
            "How do I generate a changelog automatically from commits?",
            "Which tool builds release notes from the git history?",
        ],
        {},
        [
            scope(
                "Comment écrire des messages de commit conventionnels ?",
                "How do I write conventional commit messages?",
            )
        ],
    ),
)
