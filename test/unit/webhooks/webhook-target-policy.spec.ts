import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/app-config.js';
import { WebhookTargetPolicy } from '../../../src/webhooks/webhook-target-policy.js';

const strict = new WebhookTargetPolicy(loadConfig({}));
const permissive = new WebhookTargetPolicy(loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }));

const NON_PUBLIC = 'url must not point to a loopback, private or otherwise non-public address';
const LOCAL_NAME = 'url must not name a local host (localhost, *.localhost, *.internal, *.local)';

describe('WebhookTargetPolicy.isPublicAddress', () => {
  it.each([
    ['8.8.8.8', 'public IPv4'],
    ['1.1.1.1', 'public IPv4'],
    ['93.184.215.14', 'public IPv4'],
    ['100.63.255.255', 'just below CGNAT'],
    ['100.128.0.0', 'just above CGNAT'],
    ['172.15.255.255', 'just below 172.16/12'],
    ['172.32.0.0', 'just above 172.16/12'],
    ['2606:4700:4700::1111', 'global unicast IPv6'],
    ['2a00:1450:4001:80b::200e', 'global unicast IPv6'],
    ['::ffff:8.8.8.8', 'IPv4-mapped public IPv4'],
    ['64:ff9b::808:808', 'NAT64 of a public IPv4'],
  ])('accepts %s (%s)', (address) => {
    expect(strict.isPublicAddress(address)).toBe(true);
  });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback /8'],
    ['::1', 'IPv6 loopback'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', '"this network" 0/8'],
    ['::', 'IPv6 unspecified'],
    ['10.0.0.1', 'RFC 1918 10/8'],
    ['172.16.0.1', 'RFC 1918 172.16/12'],
    ['172.31.255.255', 'RFC 1918 172.16/12'],
    ['192.168.1.1', 'RFC 1918 192.168/16'],
    ['169.254.169.254', 'link-local: cloud metadata'],
    ['169.254.0.1', 'link-local'],
    ['fe80::1', 'IPv6 link-local'],
    ['fe80::1%eth0', 'IPv6 link-local with a zone'],
    ['febf::1', 'IPv6 link-local, top of fe80::/10'],
    ['100.64.0.1', 'CGNAT 100.64/10'],
    ['100.127.255.255', 'CGNAT 100.64/10'],
    ['fc00::1', 'unique local fc00::/7'],
    ['fd12:3456:789a::1', 'unique local fd00::/8'],
    ['fd00:ec2::254', 'unique local: cloud metadata over IPv6'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'IPv6 multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved 240/4'],
    ['192.0.0.8', 'IETF protocol assignments 192.0.0/24'],
    ['192.0.2.1', 'documentation TEST-NET-1'],
    ['198.51.100.1', 'documentation TEST-NET-2'],
    ['203.0.113.1', 'documentation TEST-NET-3'],
    ['198.18.0.1', 'benchmarking 198.18/15'],
    ['198.19.255.255', 'benchmarking 198.18/15'],
    ['192.88.99.1', '6to4 relay anycast'],
    ['2001:db8::1', 'IPv6 documentation'],
    ['2001:2::1', 'IPv6 benchmarking'],
    ['100::1', 'IPv6 discard'],
    ['fec0::1', 'deprecated site-local'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, hex form'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped cloud metadata'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::ffff:0:7f00:1', 'IPv4-translated (RFC 6145) loopback'],
    ['::7f00:1', 'IPv4-compatible loopback (deprecated)'],
    ['::127.0.0.1', 'IPv4-compatible loopback, dotted form'],
    ['::808:808', 'IPv4-compatible (deprecated), outside 2000::/3'],
    ['64:ff9b::7f00:1', 'NAT64 of loopback'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 of cloud metadata'],
    ['64:ff9b::c0a8:101', 'NAT64 of 192.168.1.1'],
    ['64:ff9b:1::a00:1', 'local-use NAT64 (RFC 8215)'],
    ['2002:7f00:1::1', '6to4 embedding loopback'],
    ['2002:a00:1::1', '6to4 embedding private'],
    ['2002:808:808::1', '6to4, even of a public IPv4'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['5f00::1', 'segment routing'],
    ['4000::1', 'outside 2000::/3'],
  ])('refuses %s (%s)', (address) => {
    expect(strict.isPublicAddress(address)).toBe(false);
  });

  it.each(['2130706433', '0x7f.1', '0177.0.0.1', '127.1', 'localhost', '', '1.2.3.4.5', '[::1]'])(
    'refuses %j, which is not a standard address literal',
    (address) => {
      expect(strict.isPublicAddress(address)).toBe(false);
    },
  );

  it('classifies the same whether private targets are allowed or not', () => {
    expect(permissive.isPublicAddress('127.0.0.1')).toBe(false);
    expect(permissive.isPublicAddress('8.8.8.8')).toBe(true);
  });
});

describe('WebhookTargetPolicy.allowsAddress', () => {
  it('allows only public addresses by default', () => {
    expect(strict.allowsAddress('8.8.8.8')).toBe(true);
    expect(strict.allowsAddress('127.0.0.1')).toBe(false);
    expect(strict.allowsAddress('::1')).toBe(false);
  });

  it('allows any address when private targets are allowed', () => {
    expect(permissive.allowsAddress('127.0.0.1')).toBe(true);
    expect(permissive.allowsAddress('::1')).toBe(true);
    expect(permissive.allowsAddress('8.8.8.8')).toBe(true);
  });
});

describe('WebhookTargetPolicy.checkUrl', () => {
  it.each([
    'https://hooks.example.com/animal-store',
    'https://hooks.example.com:8443/path?query=1',
    'https://8.8.8.8/hook',
    'https://[2606:4700:4700::1111]/hook',
    'https://localhost.example.com/hook',
    'https://internal.example.com/hook',
    'https://example.local.example/hook',
  ])('accepts %j', (url) => {
    expect(strict.checkUrl(url)).toBeUndefined();
  });

  it.each([
    ['not a url', 'url must be an absolute URL'],
    ['/relative/path', 'url must be an absolute URL'],
    ['http://hooks.example.com/', 'url must be an https URL'],
    ['ftp://hooks.example.com/', 'url must be an https URL'],
    ['file:///etc/passwd', 'url must be an https URL'],
    ['gopher://127.0.0.1:6379/_INFO', 'url must be an https URL'],
    ['https://user:pass@hooks.example.com/', 'url must not contain a user name or password'],
    ['https://user@hooks.example.com/', 'url must not contain a user name or password'],
    ['https://:pass@hooks.example.com/', 'url must not contain a user name or password'],
  ])('refuses %j', (url, message) => {
    expect(strict.checkUrl(url)).toBe(message);
  });

  it.each([
    'https://127.0.0.1/',
    'https://127.0.0.1./',
    'https://[::1]/',
    'https://0.0.0.0/',
    'https://0/',
    'https://[::]/',
    'https://10.1.2.3/',
    'https://172.16.0.1/',
    'https://192.168.0.1:8443/hook',
    'https://169.254.169.254/latest/meta-data/',
    'https://100.64.0.1/',
    'https://[fe80::1]/',
    'https://[fd00::1]/',
    'https://224.0.0.1/',
    'https://255.255.255.255/',
    'https://192.0.2.1/',
    'https://198.18.0.1/',
    'https://[2001:db8::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:a9fe:a9fe]/',
    'https://[64:ff9b::7f00:1]/',
    'https://[2002:7f00:1::1]/',
    'https://2130706433/',
    'https://0x7f.1/',
    'https://0x7f000001/',
    'https://017700000001/',
    'https://0177.0.0.1/',
    'https://127.1/',
    'https://2852039166/',
    'https://0xa9.0xfe.0xa9.0xfe/',
  ])('refuses %j, whose host is a non-public address once parsed', (url) => {
    expect(strict.checkUrl(url)).toBe(NON_PUBLIC);
  });

  it.each([
    'https://localhost/',
    'https://LOCALHOST:8443/',
    'https://localhost./',
    'https://api.localhost/',
    'https://metadata.google.internal/computeMetadata/v1/',
    'https://printer.local/',
    'https://internal/',
  ])('refuses %j, a local name', (url) => {
    expect(strict.checkUrl(url)).toBe(LOCAL_NAME);
  });

  describe('when private targets are allowed', () => {
    it.each([
      'http://127.0.0.1:4000/hook',
      'https://127.0.0.1/',
      'http://localhost:4000/hook',
      'http://[::1]:4000/',
      'http://10.0.0.5/',
      'https://hooks.example.com/',
    ])('accepts %j', (url) => {
      expect(permissive.checkUrl(url)).toBeUndefined();
    });

    it.each([
      ['ftp://127.0.0.1/', 'url must be an http or https URL'],
      ['http://user:pass@127.0.0.1/', 'url must not contain a user name or password'],
      ['nope', 'url must be an absolute URL'],
    ])('still refuses %j', (url, message) => {
      expect(permissive.checkUrl(url)).toBe(message);
    });
  });
});
