/** Tables as kubectl prints them: upper-case headers, columns padded to their widest cell, three spaces apart. */

export function table(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const cells = [headers.map((h) => h.toUpperCase()), ...rows.map((r) => r.map(oneLine))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return (
    cells
      .map((r) =>
        r
          .map((c, i) => (i === r.length - 1 ? c : (c ?? '').padEnd(widths[i]!)))
          .join('   ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

/** A cell on one line: a message's line breaks and tabs would break the columns. */
function oneLine(text: string): string {
  return text.replace(/[\r\n\t]+/g, ' ');
}

/** `5m`, `3h`, `2d` as kubectl shows an age; `-` for no time. */
export function age(from: string | undefined, now: number): string {
  const t = from ? Date.parse(from) : NaN;
  if (!Number.isFinite(t)) return '-';
  return span(Math.max(0, now - t));
}

/** `in 5m`, `12m ago`: a time relative to now; `-` for none. */
export function relative(at: string | undefined, now: number): string {
  const t = at ? Date.parse(at) : NaN;
  if (!Number.isFinite(t)) return '-';
  return t >= now ? `in ${span(t - now)}` : `${span(now - t)} ago`;
}

function span(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}
