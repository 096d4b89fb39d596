/**
 * Kubernetes label selectors (metav1.LabelSelector) matched against an object's labels, as the API
 * server matches them: every `matchLabels` pair and every `matchExpressions` requirement must hold;
 * an empty selector selects everything.
 */

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }>;
}

export function selectsLabels(selector: LabelSelector, labels: Record<string, string> | undefined): boolean {
  const has = (k: string) => labels !== undefined && Object.hasOwn(labels, k);
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (!has(k) || labels![k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (!has(e.key) || !values.includes(labels![e.key]!)) return false;
        break;
      case 'NotIn':
        if (has(e.key) && values.includes(labels![e.key]!)) return false;
        break;
      case 'Exists':
        if (!has(e.key)) return false;
        break;
      case 'DoesNotExist':
        if (has(e.key)) return false;
        break;
      default:
        // An operator the schema does not allow: select nothing rather than everything.
        return false;
    }
  }
  return true;
}
