"""Question templates, written by hand.

ESG reporting for francophone SMEs: CSRD, ESRS, VSME, taxonomie, bilan carbone scopes 1/2/3.
"""

from __future__ import annotations

from training.templates import Template, entity, extent, number, polarity, q, scope, t

SCOPES = number(t("scope 1"), t("scope 2"), t("scope 3"))
STANDARDS = entity(
    t("ESRS E1", "ESRS E1"),
    t("ESRS S1", "ESRS S1"),
    t("ESRS G1", "ESRS G1"),
    t("ESRS E5", "ESRS E5"),
)
SECTORS = entity(
    t("une PME du transport routier", "a road haulage SME"),
    t("une PME du BTP", "a construction SME"),
    t("une PME agroalimentaire", "a food-processing SME"),
    t("une PME de services numériques", "a digital services SME"),
)

TEMPLATES: tuple[Template, ...] = (
    q(
        "esg.csrd_scope",
        [
            "Une entreprise de {n} salariés est-elle soumise à la CSRD ?",
            "Avec {n} salariés, doit-on faire un reporting CSRD ?",
            "La CSRD s'applique-t-elle à une société de {n} salariés ?",
        ],
        [
            "Is a company with {n} employees subject to the CSRD?",
            "With {n} staff, do we have to report under the CSRD?",
        ],
        {"n": number(t("45"), t("120"), t("260"), t("900"), t("1 200", "1,200"))},
        [
            scope(
                "À partir de quel exercice une société de {n} salariés publie-t-elle son rapport CSRD ?",
                "From which financial year does a company with {n} employees publish its CSRD report?",
            )
        ],
    ),
    q(
        "esg.csrd_year",
        [
            "Quelles entreprises publient leur premier rapport de durabilité CSRD en {y} ?",
            "Qui doit sortir son premier rapport CSRD en {y} ?",
            "Premier reporting CSRD en {y} : quelles sociétés sont concernées ?",
        ],
        [
            "Which companies publish their first CSRD sustainability report in {y}?",
            "Who has to issue a first CSRD report in {y}?",
        ],
        {"y": number(t("2025"), t("2026"), t("2027"), t("2029"))},
    ),
    q(
        "esg.esrs_content",
        [
            "Quels indicateurs demande la norme {s} ?",
            "La norme {s} impose de publier quoi ?",
            "Que faut-il reporter au titre de l'{s} ?",
        ],
        ["Which data points does {s} require?", "What must be disclosed under {s}?"],
        {"s": STANDARDS},
        [
            scope(
                "Comment savoir si la norme {s} est matérielle pour mon entreprise ?",
                "How do I know whether {s} is material for my company?",
            )
        ],
    ),
    q(
        "esg.vsme",
        [
            "La norme volontaire VSME est-elle {o} pour une PME non cotée ?",
            "Une PME non cotée : la norme VSME est-elle {o} ?",
            "Norme VSME {o} pour une PME qui n'est pas cotée ?",
        ],
        [
            "Is the voluntary VSME standard {o} for an unlisted SME?",
            "For an unlisted SME, is the VSME standard {o}?",
        ],
        {"o": polarity(t("obligatoire", "mandatory"), t("facultative", "optional"))},
        [
            scope(
                "Quels modules compte la norme VSME pour une PME non cotée ?",
                "Which modules does the VSME standard have for an unlisted SME?",
            )
        ],
    ),
    q(
        "esg.scope_definition",
        [
            "Quelles émissions entrent dans le {s} d'un bilan carbone ?",
            "Le {s}, ça couvre quelles émissions ?",
            "Qu'est-ce qu'on compte dans le {s} des émissions de GES ?",
        ],
        ["Which emissions fall under {s} in a carbon footprint?", "What does {s} cover in a GHG inventory?"],
        {"s": SCOPES},
        [scope("Comment réduire les émissions du {s} ?", "How do I cut {s} emissions?")],
    ),
    q(
        "esg.scope_sector",
        [
            "Comment collecter les données du {s} pour {e} ?",
            "Données {s} : comment les récupérer pour {e} ?",
            "Collecte des données du {s} dans {e} : par quoi commencer ?",
        ],
        ["How do I gather {s} emissions data in {e}?", "Where do I start gathering {s} data in {e}?"],
        {"s": SCOPES, "e": SECTORS},
    ),
    q(
        "esg.bilan_obligation",
        [
            "Le bilan GES réglementaire est-il obligatoire {c} pour une entreprise de {n} salariés ?",
            "{c}, une entreprise de {n} salariés doit-elle faire un bilan GES ?",
            "Bilan des émissions de GES obligatoire {c} à partir de {n} salariés ?",
        ],
        [
            "Is a regulatory GHG report mandatory {c} for a company with {n} employees?",
            "{c}, must a company with {n} staff produce a GHG report?",
        ],
        {
            "c": entity(
                t("en France", "in France"), t("en Belgique", "in Belgium"), t("au Maroc", "in Morocco")
            ),
            "n": number(t("50"), t("250"), t("500")),
        },
    ),
    q(
        "esg.emission_factor",
        [
            "Quel facteur d'émission utiliser pour {x} ?",
            "Facteur d'émission de {x} : quelle valeur prendre ?",
            "Pour {x}, quel facteur d'émission retenir dans le bilan carbone ?",
        ],
        ["Which emission factor should I use for {x}?", "What emission factor applies to {x}?"],
        {
            "x": entity(
                t("l'électricité en France", "electricity in France"),
                t("le gazole routier", "road diesel"),
                t("un trajet en avion court-courrier", "a short-haul flight"),
                t("le béton armé", "reinforced concrete"),
                t("l'électricité au Maroc", "electricity in Morocco"),
            )
        },
        [
            scope(
                "Où trouver la base officielle des facteurs d'émission pour {x} ?",
                "Where is the official emission factor database for {x}?",
            )
        ],
    ),
    q(
        "esg.emissions_change",
        [
            "Nos émissions passent de {a} à {b} tCO2e, quelle baisse en pourcentage ?",
            "De {a} à {b} tCO2e : ça représente quelle réduction en % ?",
            "Calcule la réduction en pourcentage si nos émissions vont de {a} à {b} tCO2e",
        ],
        [
            "Our emissions went from {a} to {b} tCO2e: what is the percentage reduction?",
            "From {a} to {b} tCO2e, what percentage cut is that?",
        ],
        {
            "a": number(t("850"), t("1 400", "1,400"), t("2 300", "2,300")),
            "b": number(t("610"), t("700"), t("520")),
        },
    ),
    q(
        "esg.taxonomy_activity",
        [
            "Au regard de la taxonomie européenne, {x} est une activité éligible ?",
            "Taxonomie verte de l'UE : {x}, c'est éligible ?",
            "Est-ce que {x} entre dans la taxonomie de l'UE ?",
        ],
        ["Is {x} eligible under the EU taxonomy?", "Does {x} count as an EU taxonomy-eligible activity?"],
        {
            "x": entity(
                t("la rénovation de bâtiments", "building renovation"),
                t("le transport routier de marchandises", "road freight transport"),
                t("la production d'électricité photovoltaïque", "solar power generation"),
                t("la fabrication de ciment", "cement manufacturing"),
            )
        },
        [
            scope(
                "Quels critères techniques l'activité {x} doit-elle respecter pour être alignée sur la "
                "taxonomie ?",
                "Which technical screening criteria must {x} meet to be taxonomy-aligned?",
            )
        ],
    ),
    q(
        "esg.taxonomy_kpi",
        [
            "Comment calculer la part {k} alignée sur la taxonomie ?",
            "Part alignée du {k} selon la taxonomie : comment la calculer ?",
            "Quelle méthode pour le ratio de {k} aligné taxonomie ?",
        ],
        ["How do I calculate the taxonomy-aligned share of {k}?", "How is the aligned {k} ratio computed?"],
        {
            "k": entity(
                t("du chiffre d'affaires|CA", "turnover|revenue"),
                t("des CapEx", "CapEx"),
                t("des OpEx", "OpEx"),
            )
        },
    ),
    q(
        "esg.double_materiality",
        [
            "Comment mener l'analyse de double matérialité pour {e} ?",
            "Analyse de double matérialité dans {e} : quelle méthode ?",
            "Par quoi commencer l'analyse de double matérialité pour {e} ?",
        ],
        [
            "How should {e} carry out its double materiality analysis?",
            "What method should {e} use for its double materiality assessment?",
        ],
        {"e": SECTORS},
        [
            scope(
                "Quels enjeux ressortent en général de la double matérialité pour {e} ?",
                "Which topics usually come out of the double materiality assessment for {e}?",
            )
        ],
    ),
    q(
        "esg.footprint_boundary",
        [
            "Quelles émissions peut-on {x} d'un bilan carbone ?",
            "Bilan carbone : quelles sources d'émission a-t-on le droit d'{x} ?",
            "Quels postes d'émissions est-il permis d'{x} pour un bilan carbone ?",
        ],
        [
            "Which emissions can I {x} of a carbon footprint?",
            "What emission sources are we allowed to {x} of our carbon footprint?",
        ],
        {
            "x": polarity(
                t("exclure du périmètre", "exclude from the boundary"),
                t("inclure dans le périmètre", "include in the boundary"),
            )
        },
        [
            scope(
                "Les crédits carbone achetés peuvent-ils être déduits d'un bilan carbone ?",
                "Can purchased carbon credits be deducted from a carbon footprint?",
            )
        ],
    ),
    q(
        "esg.reporting_deadline",
        [
            "Quelle est la date limite de dépôt de la déclaration {d} en {y} ?",
            "Déclaration {d} {y} : jusqu'à quand peut-on la déposer ?",
            "En {y}, la déclaration {d} doit être faite avant quelle date ?",
        ],
        [
            "What is the filing deadline for the {d} declaration in {y}?",
            "When is the {d} declaration due in {y}?",
        ],
        {
            "d": entity(
                t("BEGES", "BEGES"),
                t("Éco Énergie Tertiaire|OPERAT", "Éco Énergie Tertiaire|OPERAT"),
                t("REP emballages", "packaging EPR"),
            ),
            "y": number(t("2024"), t("2025"), t("2026")),
        },
    ),
    q(
        "esg.energy_audit",
        [
            "Un audit énergétique est-il {o} pour une entreprise qui consomme {k} GWh par an ?",
            "Avec {k} GWh consommés par an, l'audit énergétique est-il {o} ?",
            "Audit énergétique {o} à {k} GWh de consommation annuelle ?",
        ],
        [
            "Is an energy audit {o} for a company using {k} GWh a year?",
            "With {k} GWh of yearly consumption, is an energy audit {o}?",
        ],
        {
            "o": polarity(t("obligatoire", "mandatory"), t("facultatif", "optional")),
            "k": number(t("0,5", "0.5"), t("2,75", "2.75"), t("23,6", "23.6")),
        },
    ),
    q(
        "esg.green_power_scope2",
        [
            "Peut-on réduire le scope 2 calculé en méthode {m} grâce à des {g} ?",
            "Scope 2 en méthode {m} : peut-on tenir compte des {g} ?",
            "Dans un scope 2 {m}, a-t-on le droit de compter des {g} ?",
        ],
        [
            "Do {g} lower scope 2 emissions under the {m} method?",
            "Can {g} be counted in a {m} scope 2 figure?",
        ],
        {
            "g": entity(
                t("garanties d'origine", "guarantees of origin"),
                t("contrats d'achat d'électricité (PPA)|PPA", "power purchase agreements (PPAs)|PPAs"),
                t("installations solaires en autoconsommation", "on-site solar panels"),
            ),
            "m": entity(t("location-based"), t("market-based")),
        },
    ),
    q(
        "esg.scope3_category",
        [
            "Quelles émissions comprend la catégorie {n} du scope 3 ?",
            "Scope 3, catégorie {n} : qu'est-ce qu'on y met ?",
            "La catégorie {n} du scope 3 couvre quoi ?",
        ],
        ["Which emissions does scope 3 category {n} include?", "What goes into category {n} of scope 3?"],
        {"n": number(t("1"), t("4"), t("6"), t("7"), t("11"))},
        [
            scope(
                "Comment estimer la catégorie {n} du scope 3 sans données des fournisseurs ?",
                "How do I estimate scope 3 category {n} without supplier data?",
            )
        ],
    ),
    q(
        "esg.group_boundary",
        [
            "Comment consolider les émissions {s} dans le bilan carbone ?",
            "Bilan carbone : consolider les émissions {s}, comment ?",
            "Quelle méthode pour agréger les émissions {s} dans un bilan GES ?",
        ],
        [
            "How do I consolidate emissions {s} in a carbon footprint?",
            "What method should I use to aggregate emissions {s} in a GHG inventory?",
        ],
        {
            "s": extent(
                t("d'un seul site", "of a single site"),
                t("de toutes les filiales du groupe", "of all group subsidiaries"),
                t("des franchisés", "of franchisees"),
            )
        },
    ),
)
