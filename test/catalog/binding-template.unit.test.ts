import {
  DEFAULT_BINDING_TEMPLATE,
  emptiedBindingValues,
  fillBindingTemplate,
  type BoundValues,
} from '../../src/catalog/binding-template.js';

const values: BoundValues = {
  accessToken: 'at-123',
  expiresAt: '2026-01-01T00:00:00.000Z',
  baseUrl: 'https://api.example.com',
  connectionId: 'c1',
  integration: 'github',
  provider: 'github',
  connectionConfig: { tenant: 'acme', port: 8443, nested: { x: 1 } },
};

describe('fillBindingTemplate', () => {
  it('fills the token and facts about the connection', () => {
    expect(
      fillBindingTemplate(
        {
          authorization: 'Bearer ${accessToken}',
          base_url: '${baseUrl}/v1',
          who: '${integration}/${connectionId}@${connectionConfig.tenant}:${connectionConfig.port}',
        },
        values,
      ),
    ).toEqual({ authorization: 'Bearer at-123', base_url: 'https://api.example.com/v1', who: 'github/c1@acme:8443' });
    expect(fillBindingTemplate(DEFAULT_BINDING_TEMPLATE, values)).toEqual({ token: 'at-123' });
  });

  it.each([
    ['${refreshToken}', '${refreshToken} is not a value a binding can hold'],
    ['${clientSecret}', '${clientSecret} is not a value a binding can hold'],
    ['${connectionConfig.missing}', "the connection's configuration has no missing"],
    ['${connectionConfig.nested}', "the connection's configuration has no nested"],
  ])('refuses %s, naming it without any value', (template, message) => {
    let thrown: unknown;
    try {
      fillBindingTemplate({ k: template }, values);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toMatchObject({ code: 'template_invalid' });
    expect((thrown as Error).message).toContain(message);
    expect((thrown as Error).message).not.toContain('at-123');
  });

  it('refuses ${baseUrl} when the provider has none', () => {
    expect(() => fillBindingTemplate({ u: '${baseUrl}' }, { ...values, baseUrl: undefined })).toThrow(/has no baseUrl/);
  });

  it('empties: the same keys, no values', () => {
    expect(emptiedBindingValues({ token: '${accessToken}', url: '${baseUrl}' })).toEqual({ token: '', url: '' });
  });
});
