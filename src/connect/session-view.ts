/**
 * What the Connect UI shows for a session, in the end user's language: the integrations that can
 * work (those that cannot — no client credentials, Provider not ready — are left out: that is the
 * operator's problem, shown on the Integration's Ready condition and in the dashboard, not the end
 * user's), each field with the Provider's help, a subtitle from the Provider's category, Latchkey's
 * own logo for shipped providers, the certificate an administrator registers (SAML bearer Providers), and the
 * application's branding from the Environment.
 */
import { providerLogoUrl } from '../catalog/provider-logos.js';
import { parseHex, readableOn, textOn } from '../domain/colour-contrast.js';
import type { FieldHelp, ProviderResource } from '../k8s/resources.js';
import { certificateToRegister } from './certificate-view.js';
import { describeSession, type ConnectDeps } from './flows.js';
import type { OpenSession } from './session.js';
import { categoryLabel, defaultFieldLabel } from './ui-text.js';
import type { Branding, FormField, SessionView, UiLanguage } from './wire.js';

/** The card's background in each theme (src/http/connect/pages.ts): what the brand colour must contrast with. */
export const CARD_BACKGROUND = { light: 'ffffff', dark: '1f242c' } as const;

export function describeSessionForUi(deps: ConnectDeps, session: OpenSession, lang: UiLanguage): SessionView {
  const described = describeSession(deps, session);
  const integrations = described.integrations.filter((i) => !i.unavailable);
  const view: SessionView = {
    reconnect: described.reconnect,
    integrations: integrations.map((i) => {
      const provider = deps.catalog.getProvider(i.provider);
      if (!provider) return i;
      const category = provider.spec.categories?.[0];
      const logoUrl = providerLogoUrl(provider, deps.config.publicBaseUrl);
      const certificate = certificateToRegister(deps.catalog, session.namespace, i.id, provider, lang);
      return {
        ...i,
        fields: i.fields.map((f) => withHelp(f, provider, lang)),
        configFields: i.configFields.map((f) => withHelp(f, provider, lang)),
        ...(category ? { category: categoryLabel(category, lang) } : {}),
        ...(logoUrl ? { logoUrl } : {}),
        ...(certificate ? { certificate } : {}),
      };
    }),
  };
  const hidden = described.integrations.length - integrations.length;
  if (hidden) view.unavailableCount = hidden;
  const branding = brandingOf(session);
  if (branding) view.branding = branding;
  return view;
}

function withHelp(given: FormField, provider: ProviderResource, lang: UiLanguage): FormField {
  // Latchkey's own default label is translated; one the Provider gives (fieldLabels) stays as it is.
  const field = provider.spec.fieldLabels?.[given.name] ? given : { ...given, label: defaultFieldLabel(given.name, given.label, lang) };
  const help: FieldHelp | undefined = Object.hasOwn(provider.spec.fieldHelp ?? {}, field.name)
    ? provider.spec.fieldHelp![field.name]
    : undefined;
  if (!help) return field;
  const label = help.labels?.[lang];
  const description = help.descriptions?.[lang] ?? help.description;
  return {
    ...field,
    ...(label ? { label } : {}),
    ...(description ? { description } : {}),
    ...(help.example ? { example: help.example } : {}),
    ...(help.docsUrl?.startsWith('https://') ? { docsUrl: help.docsUrl } : {}),
  };
}

/** The Environment's `spec.connectUI` look, with the brand colour made readable on each theme's card. */
export function brandingOf(session: OpenSession): Branding | undefined {
  const ui = session.environment.spec.connectUI;
  const brand = ui?.brandColor ? parseHex(ui.brandColor) : undefined;
  const branding: Branding = {
    ...(ui?.appName ? { appName: ui.appName } : {}),
    ...(ui?.appLogoUrl ? { appLogoUrl: ui.appLogoUrl } : {}),
  };
  if (brand) {
    const light = readableOn(brand, CARD_BACKGROUND.light);
    const dark = readableOn(brand, CARD_BACKGROUND.dark);
    branding.accent = { light: `#${light}`, onLight: `#${textOn(light)}`, dark: `#${dark}`, onDark: `#${textOn(dark)}` };
  }
  return Object.keys(branding).length ? branding : undefined;
}
