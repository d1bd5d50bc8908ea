"""Question templates, written by hand.

Public-works sites: réception, garanties, DOE et dossiers, planning, OPC, réunions de chantier.
"""

from __future__ import annotations

from training.templates import Template, entity, extent, number, opposite, polarity, q, scope, t

GARANTIES = entity(
    t("garantie de parfait achèvement|GPA", "one-year completion warranty|GPA warranty"),
    t("garantie biennale|garantie de bon fonctionnement", "two-year equipment warranty|biennial warranty"),
    t("garantie décennale", "ten-year liability warranty|decennial warranty"),
)
DOCS = entity(
    t("DOE|dossier des ouvrages exécutés", "as-built file (DOE)|DOE"),
    t("DIUO|dossier d'intervention ultérieure sur l'ouvrage", "later-intervention file (DIUO)|DIUO"),
    t("DGD|décompte général et définitif", "final statement of account (DGD)|DGD"),
    t("PPSPS", "site health and safety plan (PPSPS)|PPSPS"),
)

TEMPLATES: tuple[Template, ...] = (
    q(
        "works.warranty_extension",
        [
            "La {g} peut-elle être prolongée ?",
            "Est-il possible de prolonger la {g} ?",
            "Prolongation de la {g} : est-ce prévu ?",
        ],
        ["Can the {g} be extended?", "Is it possible to extend the {g}?"],
        {"g": GARANTIES},
        [
            scope("Quels désordres sont couverts par la {g} ?", "Which defects does the {g} cover?"),
            scope("Qui peut mettre en jeu la {g} ?", "Who can invoke the {g}?"),
        ],
    ),
    q(
        "works.warranty_claim",
        [
            "Comment faire jouer la {g} après un désordre ?",
            "Quelle démarche pour actionner la {g} ?",
            "Un désordre est apparu : comment activer la {g} ?",
        ],
        ["How do I make a claim under the {g}?", "What is the procedure to invoke the {g} after a defect?"],
        {"g": GARANTIES},
        [
            scope(
                "Que faire si l'entreprise refuse d'intervenir au titre de la {g} ?",
                "What if the contractor refuses to act under the {g}?",
            )
        ],
    ),
    q(
        "works.doc_content",
        [
            "Que doit contenir le {d} ?",
            "Quelles pièces faut-il mettre dans le {d} ?",
            "Le {d} comprend quels documents ?",
        ],
        ["What must the {d} contain?", "Which documents go into the {d}?"],
        {"d": DOCS},
        [
            scope("Qui est chargé de rédiger le {d} ?", "Who is responsible for drafting the {d}?"),
            scope("Quel est le délai de remise du {d} ?", "What is the deadline to hand over the {d}?"),
        ],
    ),
    q(
        "works.doc_late",
        [
            "Que se passe-t-il si l'entreprise ne remet pas le {d} à temps ?",
            "Retard de remise du {d} par le titulaire : quelles conséquences ?",
            "Le titulaire n'a pas fourni le {d} dans les délais, que risque-t-il ?",
        ],
        [
            "What happens if the contractor hands over the {d} late?",
            "What are the consequences when the {d} is not delivered on time?",
        ],
        {"d": DOCS},
    ),
    q(
        "works.reception_effects",
        [
            "Quelles sont les conséquences d'une réception prononcée {p} ?",
            "Réception prononcée {p} : quels effets pour l'entreprise ?",
            "Que change une réception {p} pour le titulaire ?",
        ],
        [
            "What are the consequences of acceptance granted {p}?",
            "What does acceptance {p} change for the contractor?",
        ],
        {"p": polarity(t("avec réserves", "with reservations"), t("sans réserve", "without reservations"))},
    ),
    q(
        "works.reserves_deadline",
        [
            "Quel délai pour lever les réserves après la réception ?",
            "Les réserves de réception doivent être levées sous combien de temps ?",
            "Dans quel délai l'entreprise doit-elle lever les réserves ?",
        ],
        [
            "What is the deadline to clear reservations after acceptance?",
            "How long does the contractor have to lift the snag list after acceptance?",
        ],
        {},
        [
            opposite(
                "Que se passe-t-il si les réserves ne sont pas levées dans le délai ?",
                "What happens if the reservations are not cleared in time?",
            ),
            scope("Qui constate la levée des réserves ?", "Who records that the reservations are cleared?"),
        ],
    ),
    q(
        "works.opr",
        [
            "Qui doit être présent aux opérations préalables à la réception ?",
            "Qui convoquer aux OPR d'un chantier ?",
            "Les OPR se font en présence de qui ?",
        ],
        ["Who must attend the pre-acceptance inspection?", "Who should be invited to the OPR walkthrough?"],
        {},
        [
            scope(
                "Combien de temps avant la réception organiser les OPR ?",
                "How long before acceptance should the pre-acceptance inspection take place?",
            )
        ],
    ),
    q(
        "works.planning_delay",
        [
            "Comment justifier une prolongation du délai d'exécution pour {c} ?",
            "Prolongation de délai pour cause de {c} : comment la demander ?",
            "Quelle démarche pour obtenir un report du délai d'exécution en raison de {c} ?",
        ],
        [
            "How do I justify an extension of time because of {c}?",
            "How do I request more time on the schedule due to {c}?",
        ],
        {
            "c": entity(
                t("intempéries", "bad weather"),
                t("travaux supplémentaires", "additional works"),
                t("retard de l'entreprise précédente", "a delay by the previous contractor"),
                t("découverte de réseaux non répertoriés", "unmapped underground networks"),
            )
        },
    ),
    q(
        "works.site_roles",
        [
            "À quoi sert {o} sur un chantier ?",
            "Que fait concrètement {o} sur un chantier ?",
            "Sur un chantier, quelles sont les missions assurées par {o} ?",
        ],
        ["What does {o} do on a construction site?", "What is the job of {o} on a works project?"],
        {
            "o": entity(
                t("l'OPC|l'ordonnanceur-pilote-coordinateur", "the OPC scheduling coordinator|the OPC"),
                t("l'AMO|l'assistant à maîtrise d'ouvrage", "the owner's assistant (AMO)|the AMO"),
                t("le coordonnateur SPS", "the SPS health and safety coordinator|the SPS coordinator"),
                t("le contrôleur technique", "the technical inspector (contrôleur technique)"),
            )
        },
        [scope("Comment est rémunéré {o} sur un chantier ?", "How is {o} paid on a construction site?")],
    ),
    q(
        "works.planning_tool",
        [
            "Comment construire le planning {p} d'un chantier de {b} ?",
            "Planning {p} pour un chantier de {b} : par où commencer ?",
            "Quelle méthode pour établir le planning {p} d'une opération de {b} ?",
        ],
        [
            "How do I build the {p} schedule for {b}?",
            "Where do I start with a {p} schedule for {b}?",
        ],
        {
            "p": entity(t("de détail", "detailed"), t("directeur", "master")),
            "b": entity(
                t("réhabilitation de collège", "a school refurbishment"),
                t("construction de gymnase", "a new sports hall"),
                t("voirie communale", "municipal road works"),
            ),
        },
    ),
    q(
        "works.site_meeting",
        [
            "Qui rédige le compte rendu de la réunion de chantier ?",
            "Le CR de réunion de chantier, c'est à qui de l'écrire ?",
            "Qui est responsable du compte rendu hebdomadaire de chantier ?",
        ],
        [
            "Who writes the minutes of the site meeting?",
            "Whose job is it to draft the weekly site meeting report?",
        ],
        {},
        [
            opposite(
                "Qui peut contester le compte rendu de la réunion de chantier ?",
                "Who can dispute the minutes of the site meeting?",
            ),
            scope(
                "Que doit contenir le compte rendu de la réunion de chantier ?",
                "What must the site meeting minutes contain?",
            ),
        ],
    ),
    q(
        "works.reception_docs",
        [
            "Quels documents remettre à la réception {s} ?",
            "Réception {s} : quelles pièces fournir ?",
            "Pour la réception {s}, quels documents faut-il remettre ?",
        ],
        [
            "Which documents are handed over at acceptance {s}?",
            "What paperwork is needed for acceptance {s}?",
        ],
        {
            "s": extent(
                t("d'un seul lot", "of a single lot"), t("de toute l'opération", "of the whole project")
            )
        },
    ),
    q(
        "works.site_declaration",
        [
            "Faut-il une déclaration préalable pour un chantier de {n} hommes-jours ?",
            "Chantier de {n} hommes-jours : la déclaration préalable est-elle exigée ?",
            "Un chantier estimé à {n} hommes-jours doit-il faire l'objet d'une déclaration préalable ?",
        ],
        [
            "Is a prior site declaration required for a {n} man-day project?",
            "Does a site of {n} man-days need a prior declaration?",
        ],
        {"n": number(t("300"), t("500"), t("1 000", "1,000"), t("10 000", "10,000"))},
    ),
    q(
        "works.service_order",
        [
            "Comment réagir à un ordre de service {k} ?",
            "On reçoit un ordre de service {k}, que faire ?",
            "Ordre de service {k} notifié au titulaire : quelle conduite tenir ?",
        ],
        [
            "How should the contractor respond to a service order for {k}?",
            "We received a service order for {k}: what should we do?",
        ],
        {
            "k": entity(
                t("de démarrage des travaux", "the start of works"),
                t("de travaux supplémentaires", "additional works"),
                t("d'arrêt de chantier", "a site shutdown"),
                t("de reprise des travaux", "the resumption of works"),
            )
        },
        [
            scope(
                "Le titulaire peut-il émettre des réserves sur un ordre de service {k} ?",
                "Can the contractor object to a service order for {k}?",
            )
        ],
    ),
    q(
        "works.optional_tranche",
        [
            "Dans quel délai affermir la tranche optionnelle n°{n} d'un marché ?",
            "Tranche optionnelle {n} : jusqu'à quand l'acheteur peut-il l'affermir ?",
            "Quelle est la date limite d'affermissement de la tranche optionnelle {n} ?",
        ],
        [
            "By when must optional tranche {n} of a contract be confirmed?",
            "What is the deadline to trigger optional tranche no. {n}?",
        ],
        {"n": number(t("1"), t("2"), t("3"))},
        [
            opposite(
                "Que se passe-t-il si la tranche optionnelle {n} n'est jamais affermie ?",
                "What happens if optional tranche {n} is never confirmed?",
            )
        ],
    ),
)
