/**
 * WCAG 2 colour contrast, and the brand colour of an Environment made readable: the Connect UI uses
 * it for buttons and links, so where it is too light (light theme) or too dark (dark theme) to reach
 * AA (4.5:1) against the page it is adjusted — mixed toward black or white in small steps until it
 * does — rather than refused (an operator's colour choice should not take the Connect UI down).
 */

/** A six-digit hex colour without '#', lower case. */
export type Hex = string;

const HEX = /^#?([0-9a-fA-F]{6})$/;

export function parseHex(value: string): Hex | undefined {
  return HEX.exec(value)?.[1]?.toLowerCase();
}

/** Relative luminance (WCAG 2). */
export function luminance(hex: Hex): number {
  const [r, g, b] = [0, 2, 4].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** Contrast ratio of two colours, 1 to 21. */
export function contrast(a: Hex, b: Hex): number {
  const la = luminance(a);
  const lb = luminance(b);
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

/** WCAG AA for normal text. */
export const AA_TEXT = 4.5;

function mix(hex: Hex, toward: Hex, share: number): Hex {
  let out = '';
  for (const i of [0, 2, 4]) {
    const a = parseInt(hex.slice(i, i + 2), 16);
    const b = parseInt(toward.slice(i, i + 2), 16);
    out += Math.round(a + (b - a) * share)
      .toString(16)
      .padStart(2, '0');
  }
  return out;
}

/** `colour`, or the nearest mix of it toward black or white that reaches `ratio` against `background`. */
export function readableOn(colour: Hex, background: Hex, ratio = AA_TEXT): Hex {
  if (contrast(colour, background) >= ratio) return colour;
  const toward = luminance(background) > 0.18 ? '000000' : 'ffffff';
  for (let step = 1; step <= 20; step++) {
    const mixed = mix(colour, toward, step / 20);
    if (contrast(mixed, background) >= ratio) return mixed;
  }
  return toward;
}

/** White or black text on `colour`, whichever contrasts more (at least 4.58:1 for any colour). */
export function textOn(colour: Hex): Hex {
  return contrast(colour, 'ffffff') >= contrast(colour, '000000') ? 'ffffff' : '000000';
}
