/** WCAG contrast and the brand colour made readable (src/domain/colour-contrast.ts). */
import { AA_TEXT, contrast, parseHex, readableOn, textOn } from '../../src/domain/colour-contrast.js';

describe('colour contrast', () => {
  it('computes WCAG ratios', () => {
    expect(contrast('000000', 'ffffff')).toBeCloseTo(21, 5);
    expect(contrast('ffffff', 'ffffff')).toBe(1);
    expect(contrast('767676', 'ffffff')).toBeCloseTo(4.54, 2);
  });

  it('keeps a brand colour that is readable, and darkens or lightens one that is not until it reaches AA', () => {
    expect(readableOn('3553d1', 'ffffff')).toBe('3553d1');
    const yellowOnWhite = readableOn('ffd600', 'ffffff');
    expect(yellowOnWhite).not.toBe('ffd600');
    expect(contrast(yellowOnWhite, 'ffffff')).toBeGreaterThanOrEqual(AA_TEXT);
    const navyOnDark = readableOn('1a237e', '1b1f24');
    expect(contrast(navyOnDark, '1b1f24')).toBeGreaterThanOrEqual(AA_TEXT);
  });

  it('puts white or black text on any colour with at least AA contrast', () => {
    for (const c of ['000000', 'ffffff', '777777', '3553d1', 'ffd600', '00b388', 'ff0000'])
      expect(contrast(textOn(c), c)).toBeGreaterThanOrEqual(AA_TEXT);
  });

  it('reads #RRGGBB only', () => {
    expect(parseHex('#A1B2C3')).toBe('a1b2c3');
    expect(parseHex('red')).toBeUndefined();
    expect(parseHex('#a1b2c3;background:url(x)')).toBeUndefined();
  });
});
