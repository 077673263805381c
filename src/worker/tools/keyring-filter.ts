import { constants, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Why: the kernel's keyrings are in no namespace. A process keeps the session keyring of the one
// that started it across fork, exec and setuid, and holding it (possession) lets it read the keys
// in it whatever its uid: a sandboxed task read the worker's session keys (a login session's, a
// service's: Kerberos tickets, keys stored with `keyctl padd … @s`). Flatpak refuses these calls in
// its sandbox for the same reason. This is a classic BPF program for bwrap's --seccomp that makes
// add_key, request_key and keyctl fail with EPERM and lets every other call through.

const LD_W_ABS = 0x20;
const AND_K = 0x54;
const JEQ_K = 0x15;
const RET_K = 0x06;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const EPERM = 1;
// struct seccomp_data: the call's number at offset 0, its architecture (AUDIT_ARCH_*) at 4.
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;

/** add_key, request_key and keyctl of each architecture a Linux worker runs on (and its 32-bit compat). */
const KEY_CALLS: readonly { arch: number; mask: number; calls: readonly number[] }[] = [
  // x86_64; the mask clears x32's bit (__X32_SYSCALL_BIT), whose calls have the same numbers.
  { arch: 0xc000003e, mask: 0xbfffffff, calls: [248, 249, 250] },
  // i386: a 64-bit x86 process may make them through int 0x80.
  { arch: 0x40000003, mask: 0xffffffff, calls: [286, 287, 288] },
  // aarch64, and 32-bit arm (EABI) processes on it.
  { arch: 0xc00000b7, mask: 0xffffffff, calls: [217, 218, 219] },
  { arch: 0x40000028, mask: 0xffffffff, calls: [309, 310, 311] },
];

type Insn = { code: number; jt: number; jf: number; k: number };
const op = (code: number, k: number, jt = 0, jf = 0): Insn => ({ code, jt, jf, k });

/** The program, as struct sock_filter entries, little-endian (x86 and arm, the machines KEY_CALLS knows). */
export function keyringFilter(): Buffer {
  // Per architecture: load the number, mask it, jump to the refusal on a key call, else allow.
  const blocks = KEY_CALLS.map(({ mask, calls }) => [op(LD_W_ABS, NR_OFFSET), op(AND_K, mask), ...calls.map((nr) => op(JEQ_K, nr)), op(RET_K, SECCOMP_RET_ALLOW)]);
  const headLength = 1 + KEY_CALLS.length + 1;
  const starts: number[] = [];
  let at = headLength;
  for (const block of blocks) {
    starts.push(at);
    at += block.length;
  }
  const deny = at;
  // The head dispatches on the architecture; one it does not know is let through.
  const head = [op(LD_W_ABS, ARCH_OFFSET), ...KEY_CALLS.map(({ arch }, i) => op(JEQ_K, arch, starts[i] - (i + 2), 0)), op(RET_K, SECCOMP_RET_ALLOW)];
  const body = blocks.flatMap((block, b) => block.map((insn, i) => (insn.code === JEQ_K ? { ...insn, jt: deny - (starts[b] + i + 1) } : insn)));
  const program = [...head, ...body, op(RET_K, SECCOMP_RET_ERRNO | EPERM)];
  const out = Buffer.alloc(program.length * 8);
  program.forEach(({ code, jt, jf, k }, i) => {
    out.writeUInt16LE(code, i * 8);
    out.writeUInt8(jt, i * 8 + 2);
    out.writeUInt8(jf, i * 8 + 3);
    out.writeUInt32LE(k, i * 8 + 4);
  });
  return out;
}

let kept: number | undefined;

/**
 * A fresh descriptor (the caller hands it on or closes it) of a file holding keyringFilter(), read
 * from its start: bwrap reads --seccomp's fd to its end. Written once and unlinked at once.
 */
export function keyringFilterFd(): number {
  if (kept === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'svc-seccomp-'));
    try {
      const path = join(dir, 'keyring.bpf');
      writeFileSync(path, keyringFilter(), { mode: 0o600 });
      kept = openSync(path, constants.O_RDONLY);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return openSync(`/proc/self/fd/${kept}`, constants.O_RDONLY);
}
