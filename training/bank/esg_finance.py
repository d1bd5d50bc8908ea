"""Question templates, written by hand.

Green finance for francophone SMEs: obligations et prêts verts, labels, SFDR, plans de transition.
"""

from __future__ import annotations

from training.bank.esg_reporting import SECTORS
from training.templates import Template, entity, number, opposite, polarity, q, scope, t

COUNTRIES = entity(
    t("en France", "in France"),
    t("en Belgique", "in Belgium"),
    t("au Maroc", "in Morocco"),
    t("au Sénégal", "in Senegal"),
    t("en Côte d'Ivoire", "in Côte d'Ivoire|in Ivory Coast"),
    t("au Québec", "in Quebec"),
)

TEMPLATES: tuple[Template, ...] = (
    q(
        "esg.green_bond_issue",
        [
            "Comment une PME peut-elle émettre une obligation verte {c} ?",
            "Émission d'un green bond par une PME {c} : quelles étapes ?",
            "Quelles étapes pour lancer une obligation verte {c} quand on est une PME ?",
        ],
        [
            "How can an SME issue a green bond {c}?",
            "What are the steps for an SME to launch a green bond {c}?",
        ],
        {"c": COUNTRIES},
        [
            scope(
                "Quel montant minimum pour émettre une obligation verte {c} ?",
                "What is the minimum size of a green bond {c}?",
            ),
            scope(
                "Combien coûte une seconde opinion pour une obligation verte {c} ?",
                "How much does a second-party opinion for a green bond {c} cost?",
            ),
        ],
    ),
    q(
        "esg.green_bond_principles",
        [
            "Que prévoient les Green Bond Principles sur {p} ?",
            "Green Bond Principles de l'ICMA : que disent-ils sur {p} ?",
            "Quelles règles fixent les GBP de l'ICMA pour {p} ?",
        ],
        ["What do the Green Bond Principles say about {p}?", "What do ICMA's GBP require for {p}?"],
        {
            "p": entity(
                t("l'utilisation des fonds", "use of proceeds"),
                t("la gestion des fonds", "management of proceeds"),
                t("le reporting", "reporting"),
                t("la sélection des projets", "project evaluation and selection"),
            )
        },
    ),
    q(
        "esg.green_loan",
        [
            "Quelles conditions pour obtenir un prêt vert {c} quand on est une PME ?",
            "PME {c} : comment décrocher un prêt vert ?",
            "Prêt vert pour une PME {c}, quelles conditions ?",
        ],
        [
            "What are the conditions for an SME to get a green loan {c}?",
            "How does an SME {c} get a green loan?",
        ],
        {"c": COUNTRIES},
        [
            opposite(
                "Pourquoi une banque refuserait-elle un prêt vert à une PME {c} ?",
                "Why would a bank turn down a green loan for an SME {c}?",
            )
        ],
    ),
    q(
        "esg.label_process",
        [
            "Comment obtenir la {l} pour une PME ?",
            "Quelles étapes pour décrocher la {l} quand on est une PME ?",
            "PME : comment se faire attribuer la {l} ?",
        ],
        ["How does an SME obtain the {l}?", "What are the steps for an SME to get the {l}?"],
        {
            "l": entity(
                t("labellisation Lucie", "Lucie label"),
                t("certification B Corp", "B Corp certification"),
                t("certification ISO 14001", "ISO 14001 certification"),
                t("certification ISO 50001", "ISO 50001 certification"),
            )
        },
        [
            scope(
                "Quels documents préparer pour l'audit de la {l} ?",
                "Which documents should an SME prepare for the {l} audit?",
            ),
            opposite("Comment peut-on perdre la {l} ?", "How can a company lose the {l}?"),
        ],
    ),
    q(
        "esg.label_fund",
        [
            "Quels critères un fonds doit-il respecter pour obtenir le {l} ?",
            "{l} : quelles exigences pour un fonds d'investissement ?",
            "Un fonds veut le {l}, quelles règles doit-il suivre ?",
        ],
        [
            "What criteria must a fund meet to get the {l}?",
            "What does the {l} require from an investment fund?",
        ],
        {
            "l": entity(
                t("label Greenfin", "Greenfin label"),
                t("label ISR", "SRI label (ISR)"),
                t("label Relance", "Relance label"),
            )
        },
        [opposite("Quels secteurs sont exclus par le {l} ?", "Which sectors does the {l} exclude?")],
    ),
    q(
        "esg.sfdr_article",
        [
            "Qu'est-ce qu'un fonds classé article {a} SFDR ?",
            "Fonds article {a} au sens de SFDR : définition ?",
            "SFDR : que signifie être un fonds article {a} ?",
        ],
        [
            "What is an SFDR article {a} fund?",
            "What does it mean for a fund to be classified article {a} under SFDR?",
        ],
        {"a": number(t("6"), t("8"), t("9"))},
    ),
    q(
        "esg.transition_plan",
        [
            "Comment construire un plan de transition climat aligné sur {r} ?",
            "Plan de transition climatique compatible avec {r} : comment le bâtir ?",
            "Quelles étapes pour un plan de transition aligné {r} ?",
        ],
        [
            "How do I build a climate transition plan aligned with {r}?",
            "What are the steps for a transition plan consistent with {r}?",
        ],
        {
            "r": entity(
                t("1,5 °C", "1.5°C"), t("la SBTi", "SBTi"), t("l'Accord de Paris", "the Paris Agreement")
            )
        },
    ),
    q(
        "esg.supplier_questionnaire",
        [
            "Comment répondre au questionnaire ESG d'un client grand compte quand on est {e} ?",
            "Questionnaire RSE d'un gros client : comment y répondre pour {e} ?",
            "Un donneur d'ordre envoie un questionnaire ESG à {e}, comment le remplir ?",
        ],
        [
            "How should {e} answer a large customer's ESG questionnaire?",
            "A key account sent {e} an ESG questionnaire: how do we fill it in?",
        ],
        {"e": SECTORS},
        [
            scope(
                "Quelles preuves joindre au questionnaire ESG d'un client quand on est {e} ?",
                "Which evidence should {e} attach to a customer's ESG questionnaire?",
            )
        ],
    ),
    q(
        "esg.subsidy",
        [
            "Quelles aides existent {c} pour financer {x} dans une PME ?",
            "PME {c} : quelles subventions pour financer {x} ?",
            "Financer {x} dans une PME {c}, quelles aides ?",
        ],
        ["What support exists {c} to fund {x} in an SME?", "Which grants can an SME {c} get to pay for {x}?"],
        {
            "c": COUNTRIES,
            "x": entity(
                t("un bilan carbone", "a carbon footprint"),
                t("des panneaux solaires", "solar panels"),
                t("la rénovation énergétique des locaux", "an energy retrofit of the premises"),
            ),
        },
    ),
    q(
        "esg.green_bond_report",
        [
            "Quand publier le premier rapport d'allocation d'une obligation verte émise en {y} ?",
            "Obligation verte émise en {y} : à quelle date sort le premier rapport d'allocation ?",
            "Premier reporting d'allocation pour un green bond de {y}, c'est pour quand ?",
        ],
        [
            "When is the first allocation report due for a green bond issued in {y}?",
            "A green bond was issued in {y}: when must the first allocation report come out?",
        ],
        {"y": number(t("2023"), t("2024"), t("2025"))},
        [
            scope(
                "Que doit contenir le rapport d'impact d'une obligation verte émise en {y} ?",
                "What must the impact report of a green bond issued in {y} contain?",
            )
        ],
    ),
    q(
        "esg.green_bond_projects",
        [
            "Quels projets sont {a} pour une obligation verte ?",
            "Obligation verte : quels types de projets sont {a} ?",
            "Pour une obligation verte, quels projets sont considérés comme {a} ?",
        ],
        ["Which projects are {a} for a green bond?", "What kinds of projects are {a} under a green bond?"],
        {"a": polarity(t("éligibles", "eligible"), t("exclus", "excluded"))},
    ),
)
