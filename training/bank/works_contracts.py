"""Question templates, written by hand.

Public-works contracts: marchés publics, CCAG, prix, paiements, sous-traitance, retenue de garantie.
"""

from __future__ import annotations

from training.templates import Template, entity, extent, number, opposite, polarity, q, scope, t

CCAG = entity(
    t("CCAG Travaux", "CCAG for works contracts|works CCAG"),
    t("CCAG FCS", "CCAG for supplies and services|supplies CCAG"),
    t("CCAG PI", "CCAG for intellectual services|intellectual services CCAG"),
    t("CCAG MOE", "CCAG for project management services|MOE CCAG"),
)
YEARS = number(t("2009"), t("2014"), t("2021"))

TEMPLATES: tuple[Template, ...] = (
    q(
        "works.ccag_claims",
        [
            "Quel délai le {c} {y} laisse-t-il au titulaire pour présenter un mémoire en réclamation ?",
            "Mémoire en réclamation sous le {c} {y} : dans quel délai ?",
            "Selon le {c} de {y}, combien de temps a-t-on pour contester par un mémoire en réclamation ?",
        ],
        [
            "Under the {y} {c}, how long does the contractor have to file a claim (mémoire en réclamation)?",
            "What is the deadline for a claim memo under the {y} {c}?",
        ],
        {"c": CCAG, "y": YEARS},
        [
            scope(
                "Comment rédiger un mémoire en réclamation selon le {c} {y} ?",
                "How do I write a claim memo under the {y} {c}?",
            )
        ],
    ),
    q(
        "works.ccag_changes",
        [
            "Quelles nouveautés apporte le {c} {y} ?",
            "Qu'est-ce qui a changé dans le {c} en {y} ?",
            "{c} {y} : quelles sont les principales évolutions ?",
        ],
        ["What is new in the {y} {c}?", "What changed in the {c} in {y}?"],
        {"c": CCAG, "y": YEARS},
    ),
    q(
        "works.subcontractor_direct",
        [
            "Un sous-traitant de rang {r} a-t-il droit au paiement direct ?",
            "Paiement direct par le maître d'ouvrage : le sous-traitant de rang {r} y a-t-il droit ?",
            "Le sous-traitant de {r}e rang peut-il être payé directement ?",
        ],
        [
            "Is a tier-{r} subcontractor entitled to direct payment?",
            "Can a tier-{r} subcontractor be paid directly by the public buyer?",
        ],
        {"r": number(t("1"), t("2"), t("3"))},
    ),
    q(
        "works.subcontract_threshold",
        [
            "Pour une sous-traitance de {m}, le paiement direct est-il {o} ?",
            "Sous-traitance de {m} : le paiement direct est-il {o} ?",
            "Le paiement direct d'un sous-traitant pour {m} de prestations est-il {o} ?",
        ],
        [
            "For a {m} subcontract, is direct payment {o}?",
            "Is direct payment of a subcontractor {o} for {m} of work?",
        ],
        {
            "m": number(
                t("500 €", "€500"), t("600 €", "€600"), t("5 000 €", "€5,000"), t("60 000 €", "€60,000")
            ),
            "o": polarity(t("obligatoire", "mandatory"), t("facultatif", "optional")),
        },
    ),
    q(
        "works.subcontract_declare",
        [
            "Comment déclarer un sous-traitant en cours de marché ?",
            "Quelle procédure pour faire accepter un sous-traitant après la signature du marché ?",
            "Ajouter un sous-traitant en cours d'exécution : comment faire ?",
        ],
        [
            "How do I declare a subcontractor during the contract?",
            "What is the procedure to get a subcontractor approved after the contract is signed?",
        ],
        {},
        [
            opposite(
                "Comment retirer un sous-traitant déjà accepté en cours de marché ?",
                "How do I remove an already approved subcontractor during the contract?",
            ),
            scope(
                "Quel formulaire utiliser pour déclarer un sous-traitant en cours de marché ?",
                "Which form do I use to declare a subcontractor during the contract?",
            ),
        ],
    ),
    q(
        "works.retention_release",
        [
            "Quand la retenue de garantie est-elle {l} ?",
            "À quel moment la retenue de garantie est-elle {l} ?",
            "La retenue de garantie est {l} à quelle date ?",
        ],
        ["When is the retention money {l}?", "At what point is the retention {l}?"],
        {"l": polarity(t("restituée", "released"), t("prélevée", "withheld"))},
        [
            scope(
                "La retenue de garantie peut-elle être remplacée par une caution ?",
                "Can the retention be replaced by a bank guarantee?",
            )
        ],
    ),
    q(
        "works.retention_amount",
        [
            "Combien retient-on au titre de la retenue de garantie sur une situation de {m} HT ?",
            "Sur une situation de travaux de {m} HT, quel montant de retenue de garantie ?",
            "Retenue de garantie sur une situation mensuelle de {m} HT : ça fait combien ?",
        ],
        [
            "How much retention is withheld on a progress claim of {m} excl. VAT?",
            "What retention amount applies to an interim payment of {m} before tax?",
        ],
        {
            "m": number(
                t("40 000 €", "€40,000"),
                t("85 000 €", "€85,000"),
                t("120 000 €", "€120,000"),
                t("1,2 M€", "€1.2M"),
            )
        },
    ),
    q(
        "works.advance",
        [
            "Quel est le taux de l'avance pour un marché de {m} HT passé avec une PME ?",
            "Marché de {m} HT attribué à une PME : l'avance est de combien ?",
            "Pour une PME titulaire d'un marché de {m} HT, quel taux d'avance ?",
        ],
        [
            "What is the advance payment rate for a {m} contract awarded to an SME?",
            "An SME wins a {m} contract: how large is the advance payment?",
        ],
        {
            "m": number(
                t("30 000 €", "€30,000"),
                t("80 000 €", "€80,000"),
                t("250 000 €", "€250,000"),
                t("2 M€", "€2M"),
            )
        },
        [
            scope(
                "Quand l'avance doit-elle être remboursée pour un marché de {m} HT ?",
                "When must the advance be repaid on a {m} contract?",
            )
        ],
    ),
    q(
        "works.procedure_threshold",
        [
            "Quelle procédure pour un marché de travaux de {m} HT passé en {y} ?",
            "En {y}, un marché de travaux de {m} HT relève de quelle procédure ?",
            "Marché de travaux estimé à {m} HT en {y} : procédure adaptée ou formalisée ?",
        ],
        [
            "Which procedure applies to a {m} works contract in {y}?",
            "In {y}, does a {m} works contract need a formal tender procedure?",
        ],
        {
            "m": number(
                t("90 000 €", "€90,000"), t("150 000 €", "€150,000"), t("3 M€", "€3M"), t("6 M€", "€6M")
            ),
            "y": number(t("2020"), t("2024"), t("2026")),
        },
    ),
    q(
        "works.amendment",
        [
            "Un avenant peut-il {s} le montant d'un marché de travaux de plus de 15 % ?",
            "Est-il possible de {s} de plus de 15 % le prix d'un marché de travaux par avenant ?",
            "Avenant à plus de 15 % : peut-on {s} ainsi le montant du marché ?",
        ],
        [
            "Can an amendment {s} a works contract's value by more than 15%?",
            "Is it possible to {s} the price of a works contract by over 15% through an amendment?",
        ],
        {"s": polarity(t("augmenter", "increase"), t("diminuer", "decrease"))},
    ),
    q(
        "works.late_interest_calc",
        [
            "Calcule les intérêts moratoires sur une situation de {m} HT payée avec {j} de retard",
            "Intérêts moratoires : situation de {m} HT réglée avec {j} de retard, combien ?",
            "Combien d'intérêts moratoires pour {j} de retard de paiement sur {m} HT ?",
        ],
        [
            "Compute the late-payment interest on a {m} progress claim paid {j} late",
            "Late-payment interest: a {m} claim paid {j} late, how much?",
        ],
        {
            "j": number(t("12 jours", "12 days"), t("20 jours", "20 days"), t("45 jours", "45 days")),
            "m": number(t("180 000 €", "€180,000"), t("450 000 €", "€450,000"), t("1 M€", "€1M")),
        },
    ),
    q(
        "works.bid_documents",
        [
            "Quelles pièces fournir dans l'offre pour un marché de {l} ?",
            "Dossier de candidature pour un lot {l} : quels documents joindre ?",
            "Que doit contenir une offre pour le lot {l} d'un marché public ?",
        ],
        [
            "Which documents must a bid for a {l} contract include?",
            "What goes into a tender for the {l} lot?",
        ],
        {
            "l": entity(
                t("gros œuvre", "structural works"),
                t("électricité", "electrical"),
                t("plomberie", "plumbing"),
                t("espaces verts", "landscaping"),
            )
        },
        [
            scope(
                "Comment noter les offres du lot {l} d'un marché public ?",
                "How are bids for the {l} lot scored?",
            )
        ],
    ),
    q(
        "works.termination",
        [
            "Dans quels cas le maître d'ouvrage peut-il résilier un marché {r} ?",
            "Résiliation d'un marché {r} par l'acheteur public : dans quels cas ?",
            "Quand un acheteur peut-il mettre fin à un marché {r} ?",
        ],
        [
            "When can the public buyer terminate a contract {r}?",
            "In which cases may a contract be terminated {r} by the buyer?",
        ],
        {
            "r": entity(
                t("pour faute du titulaire", "for the contractor's fault"),
                t("pour motif d'intérêt général", "in the public interest"),
                t("pour événement extérieur", "because of an external event"),
            )
        },
        [
            scope(
                "Quelle indemnité verser au titulaire après une résiliation {r} ?",
                "What compensation is owed after a termination {r}?",
            )
        ],
    ),
    q(
        "works.payment_delay",
        [
            "Quel est le délai de paiement d'une situation de travaux par {a} ?",
            "{a} doit payer une situation de travaux sous combien de jours ?",
            "Délai global de paiement d'une facture de travaux pour {a} ?",
        ],
        [
            "What is the payment deadline for a progress claim paid by {a}?",
            "How many days does {a} have to pay a works invoice?",
        ],
        {
            "a": entity(
                t("l'État", "the State"),
                t("une commune", "a municipality"),
                t("un hôpital public", "a public hospital"),
                t("un bailleur social", "a social landlord"),
            )
        },
    ),
    q(
        "works.price_revision",
        [
            "Comment réviser le prix d'un marché de travaux avec l'index {i} ?",
            "Révision de prix indexée sur le {i} : comment faire le calcul ?",
            "Formule de révision des prix avec l'indice {i}, comment l'appliquer ?",
        ],
        [
            "How do I revise a works contract price with the {i} index?",
            "How is a price revision based on the {i} index calculated?",
        ],
        {"i": entity(t("BT01"), t("TP01"), t("TP02"), t("BT40"))},
        [
            scope(
                "Où trouver la dernière valeur publiée de l'index {i} ?",
                "Where can I find the latest published value of the {i} index?",
            )
        ],
    ),
    q(
        "works.social_clause",
        [
            "Quelles clauses sociales peut-on imposer {s} ?",
            "Clauses d'insertion sociale {s} : que peut-on exiger ?",
            "Que peut exiger un acheteur en matière de clauses sociales {s} ?",
        ],
        [
            "Which social clauses can be imposed {s}?",
            "What can a buyer require as social-inclusion clauses {s}?",
        ],
        {
            "s": extent(
                t("dans un marché de travaux", "in a works contract"),
                t(
                    "dans tous les marchés publics d'une commune",
                    "in all of a municipality's public contracts",
                ),
                t("dans le lot gros œuvre", "in the structural works lot"),
            )
        },
    ),
    q(
        "works.penalty_waiver",
        [
            "Dans quels cas l'acheteur peut-il {a} les pénalités de retard ?",
            "Quand est-il possible de {a} les pénalités de retard sur un marché public ?",
            "Pénalités de retard : quand l'acheteur peut-il les {a} ?",
        ],
        [
            "When can the buyer {a} late penalties?",
            "When is it possible to {a} late-delivery penalties on a public contract?",
        ],
        {"a": polarity(t("remettre", "waive"), t("appliquer", "apply"))},
    ),
)
