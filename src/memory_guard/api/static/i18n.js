// The page's words, French first (the teams using it work in French), and the formats of numbers and dates.
import { EN } from "./i18n-en.js";

const FR = {
  "app.title": "Mémoire des réponses",
  "app.subtitle": "console staff",
  "lang.label": "Langue",
  "signin.title": "Connexion",
  "signin.key": "Clé staff",
  "signin.help": "La clé reste dans cet onglet seulement : elle est oubliée à sa fermeture.",
  "signin.submit": "Se connecter",
  "signin.checking": "Vérification de la clé…",
  "signin.unknown": "Clé inconnue.",
  "signin.notStaff": "Cette clé n'est pas une clé staff.",
  "signin.badKey": "La clé contient des caractères qu'une clé ne peut pas avoir.",
  "signout": "Se déconnecter",
  "signout.done": "Vous êtes déconnecté : la clé a été oubliée.",
  "session.expired": "La clé n'est plus acceptée : reconnectez-vous.",
  "nav.label": "Sections",
  "nav.list": "Entrées",
  "nav.lookup": "Que ferait le garde ?",
  "nav.faq": "Ajouter une FAQ",
  "nav.stats": "Statistiques",
  "nav.audit": "Journal",
  "nav.transfer": "Import / export",
  "view.unknown": "Cette page n'existe pas.",
  "common.loading": "Chargement…",
  "common.loadMore": "Charger plus",
  "common.cancel": "Annuler",
  "common.save": "Enregistrer",
  "common.all": "Tous",
  "common.allFeminine": "Toutes",
  "common.yes": "oui",
  "common.no": "non",
  "common.optional": "{label} (facultatif)",
  "error.network": "Le service ne répond pas. Vérifiez la connexion puis réessayez.",
  "error.http": "Erreur {status} : {message}",
  "error.unavailable": "Indisponible pour le moment ({message}).",
  "status.auto": "auto",
  "status.validated": "validée",
  "status.obsolete": "obsolète",
  "source.learned": "apprise",
  "source.staff": "réécrite par le staff",
  "source.faq": "FAQ",
  "source.document": "document",
  "decision.direct": "directe",
  "decision.assisted": "assistée",
  "decision.miss": "manquée",
  "verdict.exact": "identique",
  "verdict.accept": "accepté",
  "verdict.unsure": "incertain",
  "verdict.reject": "rejeté",
  "action.create": "création",
  "action.edit": "modification",
  "action.validate": "validation",
  "action.obsolete": "mise en obsolescence",
  "action.delete": "suppression",
  "action.prune": "purge",
  "action.import": "import",
  "action.feedback": "retour client",
  "action.restore": "restauration",
  "field.id": "N°",
  "field.question": "Question",
  "field.answer": "Réponse",
  "field.status": "Statut",
  "field.source": "Source",
  "field.agent": "Agent",
  "field.project": "Projet",
  "field.phase": "Phase",
  "field.tags": "Étiquettes",
  "field.tag": "Étiquette",
  "field.scope": "Portée",
  "field.usage_count": "Utilisations",
  "field.created_at": "Créée le",
  "field.updated_at": "Modifiée le",
  "field.last_used_at": "Dernière utilisation",
  "field.expires_at": "Expire le",
  "field.embedding_model": "Modèle d'embedding",
  "field.metadata": "Métadonnées",
  "col.at": "Date",
  "col.actor": "Auteur",
  "col.action": "Action",
  "col.details": "Détails",
  "col.entry": "Entrée",
  "col.decision": "Décision",
  "col.score": "Score",
  "col.matched": "Question en mémoire",
  "col.verdict": "Verdict",
  "col.reason": "Raison",
  "col.probability": "Probabilité",
  "col.served": "Servie",
  "col.day": "Jour",
  "list.title": "Entrées de la mémoire",
  "list.query": "Recherche par le sens",
  "list.queryHint": "Une question entière ou quelques mots : les entrées les plus proches viennent en premier.",
  "list.search": "Rechercher",
  "list.reset": "Effacer les filtres",
  "list.from": "Créée à partir du",
  "list.to": "Créée jusqu'au",
  "list.export": "Exporter cette sélection",
  "list.count": "{n} entrées affichées.",
  "list.empty": "Aucune entrée ne correspond.",
  "entry.title": "Entrée n° {id}",
  "entry.back": "← Retour à la liste",
  "entry.bad": "Numéro d'entrée non valide.",
  "entry.validate": "Valider",
  "entry.edit": "Modifier",
  "entry.obsolete": "Marquer obsolète",
  "entry.delete": "Supprimer",
  "entry.details": "Informations",
  "entry.gone": "Cette entrée n'existe plus (supprimée ou purgée). Son historique est gardé : l'état d'avant un changement peut être rétabli.",
  "entry.auditLink": "Voir ses actions dans le journal",
  "confirm.obsolete": "Marquer l'entrée n° {id} comme obsolète ? Elle restera visible ici mais ne sera plus jamais servie.",
  "confirm.delete": "Supprimer définitivement l'entrée n° {id} ? Son historique reste dans le journal.",
  "confirm.restore": "Rétablir l'entrée n° {id} telle qu'elle était avant cet événement ({action}, {at}) ?",
  "done.validated": "Entrée n° {id} validée.",
  "done.obsolete": "Entrée n° {id} marquée obsolète.",
  "done.deleted": "Entrée n° {id} supprimée.",
  "done.saved": "Entrée n° {id} enregistrée.",
  "done.created": "Entrée n° {id} créée.",
  "done.restored": "Entrée n° {id} rétablie.",
  "edit.title": "Modifier l'entrée",
  "edit.tags": "Étiquettes, séparées par des virgules",
  "edit.expires": "Date d'expiration (facultative)",
  "edit.expiresHint": "Une date ne peut qu'avancer l'expiration ; vide : la durée de conservation par défaut.",
  "edit.nothing": "Rien n'a changé.",
  "history.title": "Historique",
  "history.empty": "Aucun changement enregistré.",
  "history.changed": "modifié : {fields}",
  "history.status": "statut : {from} → {to}",
  "history.before": "Avant",
  "history.after": "Après",
  "history.compare": "Voir l'ancienne et la nouvelle version",
  "restore.button": "Rétablir l'état d'avant",
  "restore.name": "Rétablir l'état d'avant : {action}, {at}",
  "restore.comeback": "L'entrée n'existe plus : elle reviendra sous le même numéro.",
  "restore.note": "Le rétablissement est lui-même noté dans l'historique : il peut être défait de la même façon.",
  "usage.title": "Utilisation",
  "usage.lookups": "Recherches qui l'ont trouvée",
  "usage.lookupsValue": "{direct} directes, {assisted} assistées",
  "usage.recent": "Dernières recherches",
  "usage.empty": "Aucune recherche ne l'a encore trouvée.",
  "lookup.title": "Que ferait le garde ?",
  "lookup.help": "Essaie une question sans aucun effet : rien n'est compté, servi ni appris.",
  "lookup.submit": "Essayer",
  "lookup.decision": "Décision :",
  "lookup.served": "Servie par l'entrée n° {id}.",
  "lookup.noServed": "Aucune entrée ne serait servie telle quelle.",
  "lookup.none": "Aucune entrée assez proche.",
  "faq.title": "Ajouter une entrée FAQ",
  "faq.help": "L'entrée est créée validée et peut être servie aussitôt.",
  "faq.submit": "Ajouter l'entrée",
  "stats.title": "Statistiques",
  "stats.days": "Période",
  "stats.daysN": "{n} derniers jours",
  "stats.entries": "Entrées",
  "stats.lookups": "Recherches",
  "stats.total": "total",
  "stats.bySource": "Entrées par source",
  "stats.hitRate": "Réponses directes",
  "stats.avoided": "Appels au LLM évités",
  "stats.tokens": "Tokens économisés",
  "stats.cost": "Coût évité (estimation)",
  "stats.costPrice": "à {price} pour 1 000 tokens",
  "stats.accuracy": "Exactitude des réponses servies",
  "stats.accuracyDetail": "{reviewed} revues, dont {wrong} fausses ; intervalle à 95 % : {low} – {high}",
  "stats.noReview": "Aucune réponse servie n'a encore été revue.",
  "chart.title": "Décisions par jour",
  "chart.desc": "Barres empilées par jour, du {from} au {to} : réponses directes, assistées et manquées.",
  "chart.none": "Aucune question reçue sur la période.",
  "chart.empty": "Pas encore de chronologie pour cette période.",
  "chart.legend": "{kind} : {n}",
  "chart.data": "Voir les chiffres du graphique",
  "chart.bar": "{day} : {direct} directes, {assisted} assistées, {miss} manquées",
  "audit.title": "Journal des actions",
  "audit.filter": "Filtrer",
  "audit.entry": "N° d'entrée",
  "audit.empty": "Aucune action enregistrée.",
  "transfer.title": "Import / export",
  "export.title": "Exporter",
  "export.help": "Toutes les entrées de la mémoire, une par ligne (JSONL), dans memory-export.jsonl.",
  "export.button": "Exporter toute la mémoire",
  "export.done": "Export prêt : {n} lignes dans memory-export.jsonl.",
  "import.title": "Importer",
  "import.file": "Fichier JSONL",
  "import.skip": "Ignorer les lignes invalides (sinon, une seule ligne invalide bloque tout l'import)",
  "import.submit": "Importer",
  "import.done": "{imported} entrées importées, {present} déjà présentes.",
  "import.skipped": "Lignes ignorées",
  "import.failed": "Rien n'a été importé.",
  "import.line": "ligne {line} : {message}",
  "import.progress": "Ré-encodage des entrées",
  "import.sending": "Envoi du fichier…",
  "import.progressText": "{done} / {total} entrées ré-encodées",
  "import.error": "L'import a échoué : {message}",
  "import.cut": "La connexion a été coupée avant la fin de l'import : vérifiez dans la liste ce qui a été importé.",
};

const WORDS = { fr: FR, en: EN };
export const LANGUAGES = [
  ["fr", "Français"],
  ["en", "English"],
];
// Only the language is remembered across visits; the key never leaves sessionStorage.
const LANG_SLOT = "memory-guard.lang";

let current = localStorage.getItem(LANG_SLOT) === "en" ? "en" : "fr";

export function lang() {
  return current;
}

export function setLang(code) {
  current = code === "en" ? "en" : "fr";
  localStorage.setItem(LANG_SLOT, current);
  document.documentElement.lang = current;
}

export function t(key, params = {}) {
  const text = WORDS[current][key] ?? FR[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
}

// A value from the API in words (status, source, decision, action), or the value itself when unknown.
export function label(group, value) {
  const key = `${group}.${value}`;
  return key in FR ? t(key) : String(value ?? "");
}

function locale() {
  return current === "en" ? "en-GB" : "fr-FR";
}

export function formatDateTime(iso) {
  if (!iso) return "—";
  const moment = new Date(iso);
  if (Number.isNaN(moment.getTime())) return String(iso);
  return new Intl.DateTimeFormat(locale(), { dateStyle: "short", timeStyle: "short" }).format(moment);
}

export function formatDay(day, style = "short") {
  // Days from the API are UTC calendar days: format them in UTC so they never shift by one.
  const moment = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(moment.getTime())) return String(day);
  const options =
    style === "short" ? { day: "2-digit", month: "2-digit", timeZone: "UTC" } : { dateStyle: "medium", timeZone: "UTC" };
  return new Intl.DateTimeFormat(locale(), options).format(moment);
}

export function formatNumber(value, digits = 0) {
  if (typeof value !== "number" || Number.isNaN(value)) return "—";
  return new Intl.NumberFormat(locale(), { maximumFractionDigits: digits }).format(value);
}

export function formatPercent(ratio) {
  if (typeof ratio !== "number" || Number.isNaN(ratio)) return "—";
  return new Intl.NumberFormat(locale(), { style: "percent", maximumFractionDigits: 1 }).format(ratio);
}

export function formatMoney(amount, currency) {
  if (typeof amount !== "number") return "—";
  try {
    return new Intl.NumberFormat(locale(), { style: "currency", currency, maximumFractionDigits: 4 }).format(amount);
  } catch {
    // Not an ISO currency code: show it as the server wrote it.
    return `${formatNumber(amount, 4)} ${currency ?? ""}`.trim();
  }
}
