/** The provider's response body on its way back: passed through untouched, or decompressed. */
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Transform } from 'node:stream';
import type { UpstreamResponse } from './upstream-response.js';

/**
 * A decoder for the response's single content coding when the provider record asks for
 * decompression, or undefined to pass the bytes through (no coding, an unknown one, several, or
 * a response without a body).
 */
export function decoderFor(response: UpstreamResponse, method: string, decompress: boolean): Transform | undefined {
  if (!decompress || method === 'HEAD') return undefined;
  const status = response.statusCode;
  if (status === 204 || status === 304 || response.header('content-length') === '0') return undefined;
  const coding = (response.header('content-encoding') ?? '').trim().toLowerCase();
  switch (coding) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
    default:
      return undefined;
  }
}
