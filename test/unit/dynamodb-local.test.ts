import { describe, expect, it } from '@jest/globals';
import { assertJavaAvailable, JavaMissingError } from '../../infra/local/dynamodb-local';

describe('assertJavaAvailable', () => {
  it('fails with an actionable message when java is not on the PATH', () => {
    const withoutJava = () => assertJavaAvailable({ PATH: '/nonexistent' });

    expect(withoutJava).toThrow(JavaMissingError);
    expect(withoutJava).toThrow(/apt-get install -y default-jre-headless/);
  });

  it('passes on a machine with java', () => {
    expect(() => assertJavaAvailable()).not.toThrow();
  });
});
