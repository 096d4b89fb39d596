/**
 * The Connect UI's own text in English, French, German, Spanish and Portuguese, the choice of the
 * language (the SDK's `lang`, then the browser's Accept-Language, then English), and category names.
 * Provider-supplied labels are not translated here: they stay as the Provider gives them, or come
 * from its per-language `fieldHelp` labels.
 */
import type { UiLanguage, UiText } from './wire.js';

export const UI_LANGUAGES: readonly UiLanguage[] = ['en', 'fr', 'de', 'es', 'pt'];

const EN: UiText = {
  loading: 'Loading…',
  chooseTitle: 'Connect an account',
  chooseSubtitle: 'Choose the service you want to connect.',
  chooseSubtitleApp: '{app} asks you to connect one of these services.',
  wantsAccess: '{app} wants access to your {provider} account.',
  search: 'Search',
  searchLabel: 'Search integrations',
  noMatch: 'No integration matches.',
  back: 'All integrations',
  connectTitle: 'Connect {name}',
  connect: 'Connect',
  continue: 'Continue',
  connecting: 'Connecting…',
  required: 'Required',
  example: 'For example: {example}',
  howToFind: 'How to find it',
  opensNewTab: '(opens in a new tab)',
  couldNotConnect: 'Could not connect',
  errorCode: 'Error code: {code}',
  tryAgain: 'Try again',
  connected: '{name} is connected',
  canClose: 'You can close this window.',
  done: 'Done.',
  redirecting: 'Redirecting to {provider}…',
  opening: 'Opening {provider}…',
  openingSignIn: 'Opening the sign-in page…',
  finishSignIn: 'Finish signing in to {provider} in the window that opened.',
  showWindow: 'Show the window',
  cancel: 'Cancel',
  windowClosed: 'The {provider} window was closed before the authorization finished.',
  continueWith: 'Continue with {provider}',
  windowOpens: 'A {provider} window opens to sign in.',
  close: 'Close',
  nothingToConnect: 'There is nothing to connect in this session.',
  notReadyTitle: 'Not available yet',
  notReady: 'The services offered here are not ready yet. Please try again later, or contact the application’s support.',
  popupBlocked: 'The browser blocked the sign-in window. Allow pop-ups for this page and try again.',
  networkError: 'The connection service could not be reached. Check your connection and try again.',
  somethingWrong: 'Something went wrong.',
  closeAndRetry: 'You can close this window and try again from the application.',
  signIn: 'Sign in with {provider}',
  credentials: 'Credentials',
  chooseAccountTitle: 'Choose your {provider} account',
  chooseAccountHelp: 'You gave access to several {provider} accounts. Choose the one to connect.',
  currentAccount: '(connected now)',
  certificateTitle: 'Certificate to register',
  certificateLead:
    '{provider} accepts this connection only once its administrator has registered this certificate. Give it to your {provider} administrator: they register it and give you the key asked below.',
  copy: 'Copy',
  copied: 'Copied',
  download: 'Download',
};

const TEXT: Record<UiLanguage, UiText> = {
  en: EN,
  fr: {
    loading: 'Chargement…',
    chooseTitle: 'Connecter un compte',
    chooseSubtitle: 'Choisissez le service à connecter.',
    chooseSubtitleApp: '{app} vous demande de connecter l’un de ces services.',
    wantsAccess: '{app} demande l’accès à votre compte {provider}.',
    search: 'Rechercher',
    searchLabel: 'Rechercher une intégration',
    noMatch: 'Aucune intégration ne correspond.',
    back: 'Toutes les intégrations',
    connectTitle: 'Connecter {name}',
    connect: 'Connecter',
    continue: 'Continuer',
    connecting: 'Connexion…',
    required: 'Obligatoire',
    example: 'Par exemple : {example}',
    howToFind: 'Où le trouver',
    opensNewTab: '(s’ouvre dans un nouvel onglet)',
    couldNotConnect: 'Connexion impossible',
    errorCode: 'Code d’erreur : {code}',
    tryAgain: 'Réessayer',
    connected: '{name} est connecté',
    canClose: 'Vous pouvez fermer cette fenêtre.',
    done: 'Terminé.',
    redirecting: 'Redirection vers {provider}…',
    opening: 'Ouverture de {provider}…',
    openingSignIn: 'Ouverture de la page de connexion…',
    finishSignIn: 'Terminez la connexion à {provider} dans la fenêtre qui s’est ouverte.',
    showWindow: 'Afficher la fenêtre',
    cancel: 'Annuler',
    windowClosed: 'La fenêtre {provider} a été fermée avant la fin de l’autorisation.',
    continueWith: 'Continuer avec {provider}',
    windowOpens: 'Une fenêtre {provider} s’ouvre pour vous connecter.',
    close: 'Fermer',
    nothingToConnect: 'Il n’y a rien à connecter dans cette session.',
    notReadyTitle: 'Pas encore disponible',
    notReady: 'Les services proposés ici ne sont pas encore prêts. Réessayez plus tard ou contactez le support de l’application.',
    popupBlocked: 'Le navigateur a bloqué la fenêtre de connexion. Autorisez les fenêtres pop-up pour cette page et réessayez.',
    networkError: 'Le service de connexion est injoignable. Vérifiez votre connexion et réessayez.',
    somethingWrong: 'Une erreur s’est produite.',
    closeAndRetry: 'Vous pouvez fermer cette fenêtre et réessayer depuis l’application.',
    signIn: 'Connexion avec {provider}',
    credentials: 'Identifiants',
    chooseAccountTitle: 'Choisissez votre compte {provider}',
    chooseAccountHelp: 'Vous avez donné accès à plusieurs comptes {provider}. Choisissez celui à connecter.',
    currentAccount: '(connecté actuellement)',
    certificateTitle: 'Certificat à enregistrer',
    certificateLead:
      '{provider} n’accepte cette connexion qu’une fois ce certificat enregistré par son administrateur. Transmettez-le à votre administrateur {provider} : il l’enregistre et vous donne la clé demandée ci-dessous.',
    copy: 'Copier',
    copied: 'Copié',
    download: 'Télécharger',
  },
  de: {
    loading: 'Wird geladen…',
    chooseTitle: 'Konto verbinden',
    chooseSubtitle: 'Wählen Sie den Dienst, den Sie verbinden möchten.',
    chooseSubtitleApp: '{app} bittet Sie, einen dieser Dienste zu verbinden.',
    wantsAccess: '{app} möchte auf Ihr {provider}-Konto zugreifen.',
    search: 'Suchen',
    searchLabel: 'Integrationen durchsuchen',
    noMatch: 'Keine Integration gefunden.',
    back: 'Alle Integrationen',
    connectTitle: '{name} verbinden',
    connect: 'Verbinden',
    continue: 'Weiter',
    connecting: 'Wird verbunden…',
    required: 'Pflichtfeld',
    example: 'Zum Beispiel: {example}',
    howToFind: 'Wo finde ich das?',
    opensNewTab: '(öffnet in einem neuen Tab)',
    couldNotConnect: 'Verbindung fehlgeschlagen',
    errorCode: 'Fehlercode: {code}',
    tryAgain: 'Erneut versuchen',
    connected: '{name} ist verbunden',
    canClose: 'Sie können dieses Fenster schließen.',
    done: 'Fertig.',
    redirecting: 'Weiterleitung zu {provider}…',
    opening: '{provider} wird geöffnet…',
    openingSignIn: 'Die Anmeldeseite wird geöffnet…',
    finishSignIn: 'Schließen Sie die Anmeldung bei {provider} im geöffneten Fenster ab.',
    showWindow: 'Fenster anzeigen',
    cancel: 'Abbrechen',
    windowClosed: 'Das {provider}-Fenster wurde geschlossen, bevor die Autorisierung abgeschlossen war.',
    continueWith: 'Weiter mit {provider}',
    windowOpens: 'Ein {provider}-Fenster öffnet sich zur Anmeldung.',
    close: 'Schließen',
    nothingToConnect: 'In dieser Sitzung gibt es nichts zu verbinden.',
    notReadyTitle: 'Noch nicht verfügbar',
    notReady:
      'Die hier angebotenen Dienste sind noch nicht eingerichtet. Versuchen Sie es später erneut oder wenden Sie sich an den Support der Anwendung.',
    popupBlocked: 'Der Browser hat das Anmeldefenster blockiert. Erlauben Sie Pop-ups für diese Seite und versuchen Sie es erneut.',
    networkError: 'Der Verbindungsdienst ist nicht erreichbar. Prüfen Sie Ihre Verbindung und versuchen Sie es erneut.',
    somethingWrong: 'Etwas ist schiefgelaufen.',
    closeAndRetry: 'Sie können dieses Fenster schließen und es in der Anwendung erneut versuchen.',
    signIn: 'Mit {provider} anmelden',
    credentials: 'Zugangsdaten',
    chooseAccountTitle: 'Wählen Sie Ihr {provider}-Konto',
    chooseAccountHelp: 'Sie haben Zugriff auf mehrere {provider}-Konten gewährt. Wählen Sie das Konto, das verbunden werden soll.',
    currentAccount: '(derzeit verbunden)',
    certificateTitle: 'Zu registrierendes Zertifikat',
    certificateLead:
      '{provider} akzeptiert diese Verbindung erst, wenn die Administration dieses Zertifikat registriert hat. Geben Sie es Ihrer {provider}-Administration: Sie registriert es und gibt Ihnen den unten verlangten Schlüssel.',
    copy: 'Kopieren',
    copied: 'Kopiert',
    download: 'Herunterladen',
  },
  es: {
    loading: 'Cargando…',
    chooseTitle: 'Conectar una cuenta',
    chooseSubtitle: 'Elija el servicio que quiere conectar.',
    chooseSubtitleApp: '{app} le pide conectar uno de estos servicios.',
    wantsAccess: '{app} quiere acceder a su cuenta de {provider}.',
    search: 'Buscar',
    searchLabel: 'Buscar integraciones',
    noMatch: 'Ninguna integración coincide.',
    back: 'Todas las integraciones',
    connectTitle: 'Conectar {name}',
    connect: 'Conectar',
    continue: 'Continuar',
    connecting: 'Conectando…',
    required: 'Obligatorio',
    example: 'Por ejemplo: {example}',
    howToFind: 'Dónde encontrarlo',
    opensNewTab: '(se abre en una pestaña nueva)',
    couldNotConnect: 'No se pudo conectar',
    errorCode: 'Código de error: {code}',
    tryAgain: 'Reintentar',
    connected: '{name} está conectado',
    canClose: 'Puede cerrar esta ventana.',
    done: 'Listo.',
    redirecting: 'Redirigiendo a {provider}…',
    opening: 'Abriendo {provider}…',
    openingSignIn: 'Abriendo la página de inicio de sesión…',
    finishSignIn: 'Termine de iniciar sesión en {provider} en la ventana que se abrió.',
    showWindow: 'Mostrar la ventana',
    cancel: 'Cancelar',
    windowClosed: 'La ventana de {provider} se cerró antes de terminar la autorización.',
    continueWith: 'Continuar con {provider}',
    windowOpens: 'Se abre una ventana de {provider} para iniciar sesión.',
    close: 'Cerrar',
    nothingToConnect: 'No hay nada que conectar en esta sesión.',
    notReadyTitle: 'Aún no disponible',
    notReady: 'Los servicios ofrecidos aquí aún no están listos. Inténtelo más tarde o contacte con el soporte de la aplicación.',
    popupBlocked:
      'El navegador bloqueó la ventana de inicio de sesión. Permita las ventanas emergentes para esta página e inténtelo de nuevo.',
    networkError: 'No se pudo contactar con el servicio de conexión. Compruebe su conexión e inténtelo de nuevo.',
    somethingWrong: 'Algo salió mal.',
    closeAndRetry: 'Puede cerrar esta ventana e intentarlo de nuevo desde la aplicación.',
    signIn: 'Iniciar sesión con {provider}',
    credentials: 'Credenciales',
    chooseAccountTitle: 'Elija su cuenta de {provider}',
    chooseAccountHelp: 'Ha dado acceso a varias cuentas de {provider}. Elija la que quiere conectar.',
    currentAccount: '(conectada ahora)',
    certificateTitle: 'Certificado que registrar',
    certificateLead:
      '{provider} solo acepta esta conexión cuando su administrador ha registrado este certificado. Entrégueselo a su administrador de {provider}: lo registra y le da la clave que se pide abajo.',
    copy: 'Copiar',
    copied: 'Copiado',
    download: 'Descargar',
  },
  pt: {
    loading: 'Carregando…',
    chooseTitle: 'Conectar uma conta',
    chooseSubtitle: 'Escolha o serviço que deseja conectar.',
    chooseSubtitleApp: '{app} pede que você conecte um destes serviços.',
    wantsAccess: '{app} quer acessar sua conta {provider}.',
    search: 'Pesquisar',
    searchLabel: 'Pesquisar integrações',
    noMatch: 'Nenhuma integração corresponde.',
    back: 'Todas as integrações',
    connectTitle: 'Conectar {name}',
    connect: 'Conectar',
    continue: 'Continuar',
    connecting: 'Conectando…',
    required: 'Obrigatório',
    example: 'Por exemplo: {example}',
    howToFind: 'Onde encontrar',
    opensNewTab: '(abre em uma nova aba)',
    couldNotConnect: 'Não foi possível conectar',
    errorCode: 'Código de erro: {code}',
    tryAgain: 'Tentar novamente',
    connected: '{name} está conectado',
    canClose: 'Você pode fechar esta janela.',
    done: 'Concluído.',
    redirecting: 'Redirecionando para {provider}…',
    opening: 'Abrindo {provider}…',
    openingSignIn: 'Abrindo a página de login…',
    finishSignIn: 'Conclua o login em {provider} na janela que abriu.',
    showWindow: 'Mostrar a janela',
    cancel: 'Cancelar',
    windowClosed: 'A janela de {provider} foi fechada antes de concluir a autorização.',
    continueWith: 'Continuar com {provider}',
    windowOpens: 'Uma janela de {provider} abre para fazer login.',
    close: 'Fechar',
    nothingToConnect: 'Não há nada para conectar nesta sessão.',
    notReadyTitle: 'Ainda não disponível',
    notReady: 'Os serviços oferecidos aqui ainda não estão prontos. Tente mais tarde ou entre em contato com o suporte do aplicativo.',
    popupBlocked: 'O navegador bloqueou a janela de login. Permita pop-ups para esta página e tente novamente.',
    networkError: 'Não foi possível acessar o serviço de conexão. Verifique sua conexão e tente novamente.',
    somethingWrong: 'Algo deu errado.',
    closeAndRetry: 'Você pode fechar esta janela e tentar novamente pelo aplicativo.',
    signIn: 'Entrar com {provider}',
    credentials: 'Credenciais',
    chooseAccountTitle: 'Escolha sua conta {provider}',
    chooseAccountHelp: 'Você deu acesso a várias contas {provider}. Escolha a que deseja conectar.',
    currentAccount: '(conectada agora)',
    certificateTitle: 'Certificado a registrar',
    certificateLead:
      'O {provider} só aceita esta conexão depois de o administrador registrar este certificado. Entregue-o ao seu administrador do {provider}: ele o registra e lhe dá a chave pedida abaixo.',
    copy: 'Copiar',
    copied: 'Copiado',
    download: 'Baixar',
  },
};

export function uiText(lang: UiLanguage): UiText {
  return TEXT[lang];
}

function supported(tag: string | undefined): UiLanguage | undefined {
  const primary = tag?.trim().toLowerCase().split(/[-_]/)[0];
  return UI_LANGUAGES.find((l) => l === primary);
}

/**
 * The page's language: the SDK's `lang` when it is one we have, then the first language of the
 * browser's Accept-Language (by q-value) that we have, then English.
 */
export function pickLanguage(lang: string | undefined, acceptLanguage: string | undefined): UiLanguage {
  const asked = supported(lang);
  if (asked) return asked;
  const ranked = (acceptLanguage ?? '')
    .slice(0, 512)
    .split(',')
    .map((part, index) => {
      const [tag, ...params] = part.split(';');
      const q = params.map((p) => /^\s*q=([01](?:\.\d{1,3})?)\s*$/.exec(p)?.[1]).find(Boolean);
      return { tag, q: q === undefined ? 1 : Number(q), index };
    })
    .filter((l) => l.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const l of ranked) {
    const found = supported(l.tag);
    if (found) return found;
  }
  return 'en';
}

/** Names of the catalog's common categories; others are shown as written, dashes as spaces. */
const CATEGORIES: Record<string, Record<UiLanguage, string>> = {
  'dev-tools': {
    en: 'Developer tools',
    fr: 'Outils de développement',
    de: 'Entwicklerwerkzeuge',
    es: 'Herramientas de desarrollo',
    pt: 'Ferramentas de desenvolvimento',
  },
  marketing: { en: 'Marketing', fr: 'Marketing', de: 'Marketing', es: 'Marketing', pt: 'Marketing' },
  productivity: { en: 'Productivity', fr: 'Productivité', de: 'Produktivität', es: 'Productividad', pt: 'Produtividade' },
  ai: { en: 'AI', fr: 'IA', de: 'KI', es: 'IA', pt: 'IA' },
  communication: { en: 'Communication', fr: 'Communication', de: 'Kommunikation', es: 'Comunicación', pt: 'Comunicação' },
  ticketing: { en: 'Ticketing', fr: 'Tickets', de: 'Ticketsystem', es: 'Tickets', pt: 'Tickets' },
  payment: { en: 'Payments', fr: 'Paiements', de: 'Zahlungen', es: 'Pagos', pt: 'Pagamentos' },
  payments: { en: 'Payments', fr: 'Paiements', de: 'Zahlungen', es: 'Pagos', pt: 'Pagamentos' },
  accounting: { en: 'Accounting', fr: 'Comptabilité', de: 'Buchhaltung', es: 'Contabilidad', pt: 'Contabilidade' },
  'e-commerce': { en: 'E-commerce', fr: 'E-commerce', de: 'E-Commerce', es: 'Comercio electrónico', pt: 'Comércio eletrônico' },
  crm: { en: 'CRM', fr: 'CRM', de: 'CRM', es: 'CRM', pt: 'CRM' },
  analytics: { en: 'Analytics', fr: 'Analyse', de: 'Analyse', es: 'Analítica', pt: 'Análise' },
  email: { en: 'Email', fr: 'E-mail', de: 'E-Mail', es: 'Correo electrónico', pt: 'E-mail' },
  hr: { en: 'HR', fr: 'RH', de: 'Personalwesen', es: 'RR. HH.', pt: 'RH' },
  social: { en: 'Social', fr: 'Réseaux sociaux', de: 'Soziale Netzwerke', es: 'Redes sociales', pt: 'Redes sociais' },
  support: { en: 'Support', fr: 'Support', de: 'Support', es: 'Soporte', pt: 'Suporte' },
  cloud: { en: 'Cloud', fr: 'Cloud', de: 'Cloud', es: 'Nube', pt: 'Nuvem' },
  storage: { en: 'Storage', fr: 'Stockage', de: 'Speicher', es: 'Almacenamiento', pt: 'Armazenamento' },
  calendar: { en: 'Calendar', fr: 'Agenda', de: 'Kalender', es: 'Calendario', pt: 'Calendário' },
  design: { en: 'Design', fr: 'Design', de: 'Design', es: 'Diseño', pt: 'Design' },
  database: { en: 'Database', fr: 'Base de données', de: 'Datenbank', es: 'Base de datos', pt: 'Banco de dados' },
};

/** A category's name in `lang`. */
export function categoryLabel(category: string, lang: UiLanguage): string {
  const known = Object.hasOwn(CATEGORIES, category) ? CATEGORIES[category]![lang] : undefined;
  if (known) return known;
  const plain = category.replace(/-/g, ' ');
  return plain.charAt(0).toUpperCase() + plain.slice(1);
}

/** Fills `{key}` placeholders. */
export function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (all, key: string) => (Object.hasOwn(values, key) ? values[key]! : all));
}

/** Latchkey's own labels of credential fields (src/connect/connect-modes.ts), translated; a Provider's labels are not. */
const FIELD_LABELS: Record<string, Record<UiLanguage, string>> = {
  apiKey: { en: 'API key', fr: 'Clé API', de: 'API-Schlüssel', es: 'Clave de API', pt: 'Chave de API' },
  username: { en: 'Username', fr: 'Nom d’utilisateur', de: 'Benutzername', es: 'Nombre de usuario', pt: 'Nome de usuário' },
  password: { en: 'Password', fr: 'Mot de passe', de: 'Passwort', es: 'Contraseña', pt: 'Senha' },
  clientId: { en: 'Client ID', fr: 'ID client', de: 'Client-ID', es: 'ID de cliente', pt: 'ID do cliente' },
  clientSecret: { en: 'Client secret', fr: 'Secret client', de: 'Client-Secret', es: 'Secreto de cliente', pt: 'Segredo do cliente' },
  tokenId: { en: 'Token ID', fr: 'ID du jeton', de: 'Token-ID', es: 'ID del token', pt: 'ID do token' },
  tokenSecret: { en: 'Token secret', fr: 'Secret du jeton', de: 'Token-Secret', es: 'Secreto del token', pt: 'Segredo do token' },
};

/** Latchkey's default label of a credential field in `lang`, when `label` is that default (in English). */
export function defaultFieldLabel(name: string, label: string, lang: UiLanguage): string {
  const known = Object.hasOwn(FIELD_LABELS, name) ? FIELD_LABELS[name]! : undefined;
  return known && known.en === label ? known[lang] : label;
}

/**
 * The end-user errors' messages in the other languages, by error code. English pages keep the
 * server's own message (it may name the provider); the others show these, or the English message
 * for a code not listed.
 */
const ERROR_TEXT: Record<Exclude<UiLanguage, 'en'>, Record<string, string>> = {
  fr: {
    post_connection_failed:
      'Le service n’a pas donné les détails du compte que vous venez d’autoriser. Réessayez ; si cela se reproduit, contactez le support de l’application.',
    several_accounts:
      'Cette autorisation donne accès à plusieurs comptes, et un seul peut être connecté à la fois. Recommencez en donnant accès uniquement au compte à connecter.',
    account_choice_expired:
      'Ce choix n’est plus disponible : il a déjà été fait, ou il a attendu trop longtemps. Recommencez depuis l’application.',
    invalid_account_choice: 'Choisissez l’un des comptes proposés.',
    different_account:
      'Ce compte n’est pas celui de la connexion. La connexion garde ses identifiants ; connectez l’autre compte comme une nouvelle connexion.',
    not_embedded: 'Cette page s’affiche dans l’application. Ouvrez-la depuis l’application.',
    session_expired: 'La session de connexion a expiré. Revenez à l’application et recommencez.',
    invalid_session: 'La session de connexion n’est pas valide. Demandez un nouveau lien à l’application.',
    missing_session: 'Cette page a besoin d’une session de connexion. Ouvrez-la depuis l’application.',
    session_already_used: 'Ce lien a déjà servi. Demandez un nouveau lien à l’application.',
    access_denied: 'L’accès n’a pas été accordé.',
    invalid_callback: 'Cette réponse d’autorisation n’est pas valide.',
    invalid_state: 'Cette réponse d’autorisation n’est pas valide.',
    temporarily_unavailable: 'La connexion n’a pas pu être enregistrée pour l’instant. Réessayez dans un moment.',
  },
  de: {
    post_connection_failed:
      'Der Dienst hat die Angaben zum soeben autorisierten Konto nicht geliefert. Versuchen Sie es erneut; wenn es wieder passiert, wenden Sie sich an den Support der Anwendung.',
    several_accounts:
      'Diese Autorisierung gewährt Zugriff auf mehrere Konten, verbunden werden kann jeweils nur eines. Beginnen Sie erneut und gewähren Sie Zugriff nur auf das Konto, das verbunden werden soll.',
    account_choice_expired:
      'Diese Auswahl ist nicht mehr verfügbar: Sie wurde schon getroffen oder hat zu lange gewartet. Beginnen Sie in der Anwendung erneut.',
    invalid_account_choice: 'Wählen Sie eines der angezeigten Konten.',
    different_account:
      'Dieses Konto ist nicht das der Verbindung. Die Verbindung behält ihre Zugangsdaten; verbinden Sie das andere Konto als neue Verbindung.',
    not_embedded: 'Diese Seite wird in der Anwendung angezeigt. Öffnen Sie sie dort.',
    session_expired: 'Die Verbindungssitzung ist abgelaufen. Kehren Sie zur Anwendung zurück und beginnen Sie erneut.',
    invalid_session: 'Die Verbindungssitzung ist ungültig. Fordern Sie in der Anwendung einen neuen Link an.',
    missing_session: 'Diese Seite benötigt eine Verbindungssitzung. Öffnen Sie sie aus der Anwendung.',
    session_already_used: 'Dieser Link wurde bereits verwendet. Fordern Sie in der Anwendung einen neuen Link an.',
    access_denied: 'Der Zugriff wurde nicht gewährt.',
    invalid_callback: 'Diese Autorisierungsantwort ist ungültig.',
    invalid_state: 'Diese Autorisierungsantwort ist ungültig.',
    temporarily_unavailable: 'Die Verbindung konnte gerade nicht gespeichert werden. Versuchen Sie es gleich noch einmal.',
  },
  es: {
    post_connection_failed:
      'El servicio no dio los datos de la cuenta que acaba de autorizar. Inténtelo de nuevo; si vuelve a ocurrir, contacte con el soporte de la aplicación.',
    several_accounts:
      'Esta autorización da acceso a varias cuentas, y solo se puede conectar una a la vez. Empiece de nuevo y dé acceso solo a la cuenta que quiere conectar.',
    account_choice_expired: 'Esta elección ya no está disponible: ya se hizo o esperó demasiado. Empiece de nuevo desde la aplicación.',
    invalid_account_choice: 'Elija una de las cuentas de la lista.',
    different_account:
      'Esta cuenta no es la de la conexión. La conexión conserva sus credenciales; conecte la otra cuenta como una conexión nueva.',
    not_embedded: 'Esta página se muestra dentro de la aplicación. Ábrala desde allí.',
    session_expired: 'La sesión de conexión ha caducado. Vuelva a la aplicación y empiece de nuevo.',
    invalid_session: 'La sesión de conexión no es válida. Pida un enlace nuevo a la aplicación.',
    missing_session: 'Esta página necesita una sesión de conexión. Ábrala desde la aplicación.',
    session_already_used: 'Este enlace ya se usó. Pida un enlace nuevo a la aplicación.',
    access_denied: 'No se concedió el acceso.',
    invalid_callback: 'Esta respuesta de autorización no es válida.',
    invalid_state: 'Esta respuesta de autorización no es válida.',
    temporarily_unavailable: 'No se pudo guardar la conexión en este momento. Inténtelo de nuevo en un momento.',
  },
  pt: {
    post_connection_failed:
      'O serviço não informou os dados da conta que você acabou de autorizar. Tente novamente; se acontecer de novo, contate o suporte do aplicativo.',
    several_accounts:
      'Esta autorização dá acesso a várias contas, e só uma pode ser conectada por vez. Comece de novo e dê acesso apenas à conta que deseja conectar.',
    account_choice_expired: 'Esta escolha não está mais disponível: já foi feita ou esperou demais. Comece de novo pelo aplicativo.',
    invalid_account_choice: 'Escolha uma das contas da lista.',
    different_account: 'Esta conta não é a da conexão. A conexão mantém suas credenciais; conecte a outra conta como uma nova conexão.',
    not_embedded: 'Esta página é exibida dentro do aplicativo. Abra-a por lá.',
    session_expired: 'A sessão de conexão expirou. Volte ao aplicativo e comece de novo.',
    invalid_session: 'A sessão de conexão não é válida. Peça um novo link ao aplicativo.',
    missing_session: 'Esta página precisa de uma sessão de conexão. Abra-a pelo aplicativo.',
    session_already_used: 'Este link já foi usado. Peça um novo link ao aplicativo.',
    access_denied: 'O acesso não foi concedido.',
    invalid_callback: 'Esta resposta de autorização não é válida.',
    invalid_state: 'Esta resposta de autorização não é válida.',
    temporarily_unavailable: 'Não foi possível salvar a conexão agora. Tente novamente em instantes.',
  },
};

/** The messages of end-user error codes in `lang` (none for English: the server's own are shown). */
export function errorTexts(lang: UiLanguage): Record<string, string> {
  return lang === 'en' ? {} : ERROR_TEXT[lang];
}

/** An error's message in `lang`: ours for a code we translate, else the server's. */
export function errorMessage(lang: UiLanguage, code: string, message: string): string {
  const texts = errorTexts(lang);
  return Object.hasOwn(texts, code) ? texts[code]! : message;
}
