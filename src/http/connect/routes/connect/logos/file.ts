/** `GET /connect/logos/{file}`: shipped providers' logos, served here so the end user's browser asks no third party for them. */
import type { RequestHandler } from 'express';
import { providerLogoSvg } from '../../../../../catalog/provider-logos.js';

export const logoRoute: RequestHandler = (req, res) => {
  const name = /^([a-z0-9][a-z0-9-]{0,62})\.svg$/.exec(String(req.params.file))?.[1];
  const svg = name ? providerLogoSvg(name) : undefined;
  if (!svg) {
    res.status(404).json({ error: { code: 'not_found', message: 'No such logo.' } });
    return;
  }
  res
    .set({
      'content-type': 'image/svg+xml',
      'cache-control': 'public, max-age=86400',
      'x-content-type-options': 'nosniff',
      // The application's own pages may show GET /providers' logo_url.
      'cross-origin-resource-policy': 'cross-origin',
      'content-security-policy': "default-src 'none'",
    })
    .send(svg);
};
