import { describe, expect, it } from 'vitest';
import { ClientAddressResolver } from '../../../src/http/client-address.js';

describe('ClientAddressResolver', () => {
  const none = new ClientAddressResolver([]);
  const balancer = new ClientAddressResolver(['10.0.0.1']);
  const network = new ClientAddressResolver(['10.0.0.0/8', '2001:db8::/32']);

  it('is the socket address when no proxy is trusted, whatever X-Forwarded-For says', () => {
    expect(none.resolve('203.0.113.7', '198.51.100.1')).toBe('203.0.113.7');
    expect(none.resolve('10.0.0.1', '198.51.100.1')).toBe('10.0.0.1');
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy (no spoofing)', () => {
    expect(balancer.resolve('203.0.113.7', '198.51.100.1')).toBe('203.0.113.7');
  });

  it('takes the address a trusted proxy appended', () => {
    expect(balancer.resolve('10.0.0.1', '198.51.100.1')).toBe('198.51.100.1');
  });

  it('takes the right-most untrusted entry: what the client wrote to the left proves nothing', () => {
    expect(balancer.resolve('10.0.0.1', '1.1.1.1, 2.2.2.2, 198.51.100.1')).toBe('198.51.100.1');
  });

  it('walks back through a chain of trusted proxies', () => {
    expect(network.resolve('10.0.0.1', '1.1.1.1, 198.51.100.1, 10.2.3.4, 10.9.9.9')).toBe(
      '198.51.100.1',
    );
  });

  it('joins repeated X-Forwarded-For headers in order', () => {
    expect(network.resolve('10.0.0.1', ['1.1.1.1', '198.51.100.1, 10.2.3.4'])).toBe('198.51.100.1');
  });

  it('is the left-most entry when every hop is trusted', () => {
    expect(network.resolve('10.0.0.1', '10.5.5.5, 10.2.3.4')).toBe('10.5.5.5');
  });

  it('stops at the last trusted hop when an entry is not an address', () => {
    expect(network.resolve('10.0.0.1', '198.51.100.1, unknown, 10.2.3.4')).toBe('10.2.3.4');
    expect(balancer.resolve('10.0.0.1', 'garbage')).toBe('10.0.0.1');
  });

  it('is the trusted proxy itself when it sent no X-Forwarded-For', () => {
    expect(balancer.resolve('10.0.0.1', undefined)).toBe('10.0.0.1');
  });

  it('treats IPv4-mapped IPv6 as IPv4, for the peer and for entries', () => {
    expect(balancer.resolve('::ffff:10.0.0.1', '::ffff:198.51.100.1')).toBe('198.51.100.1');
    expect(none.resolve('::ffff:203.0.113.7', undefined)).toBe('203.0.113.7');
  });

  it('handles IPv6 proxies and clients', () => {
    expect(network.resolve('2001:db8::1', '2001:db9::42')).toBe('2001:db9::42');
    expect(network.resolve('2001:db9::1', '198.51.100.1')).toBe('2001:db9::1');
  });

  it('is an empty string when the socket address is unknown (closed socket)', () => {
    expect(balancer.resolve(undefined, '198.51.100.1')).toBe('');
  });
});
