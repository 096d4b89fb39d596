/** What the writing integration routes say of the Environment's permission (their OpenAPI description). */
export const WRITES =
  'Refused with 403 `integration_writes_disabled` unless the Environment sets `spec.api.integrationWrites: true` (the chart must also grant `rbac.integrationWrites`).';
