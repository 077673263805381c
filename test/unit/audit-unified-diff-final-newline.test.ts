import { describe, expect, it } from 'vitest';
import { unifiedDiff } from '../../src/unified-diff.ts';

// Two catalog versions that differ only in the text's final newline (an editor that adds one)
// are two versions with two content hashes, but their diff was empty, as for one version with
// itself. The diff now says so as `diff -u` does: `\ No newline at end of file`.
describe('unifiedDiff and the final newline', () => {
  it('shows a final newline added or removed', () => {
    expect(unifiedDiff('a\nb\nc', 'a\nb\nc\n', 'x@1', 'x@2')).toBe('--- x@1\n+++ x@2\n@@ -1,3 +1,3 @@\n a\n b\n-c\n\\ No newline at end of file\n+c\n');
    expect(unifiedDiff('a\nb\nc\n', 'a\nb\nc', 'x@1', 'x@2')).toBe('--- x@1\n+++ x@2\n@@ -1,3 +1,3 @@\n a\n b\n-c\n+c\n\\ No newline at end of file\n');
  });

  it('marks a last line without one that both sides share, and changes nothing else', () => {
    expect(unifiedDiff('a\nb', 'x\nb', 'x@1', 'x@2')).toBe('--- x@1\n+++ x@2\n@@ -1,2 +1,2 @@\n-a\n+x\n b\n\\ No newline at end of file\n');
    expect(unifiedDiff('a\nb', 'a\nb', 'x@1', 'x@2')).toBe('');
    expect(unifiedDiff('a\n', 'a\nb\n', 'x@1', 'x@2')).toBe('--- x@1\n+++ x@2\n@@ -1,1 +1,2 @@\n a\n+b\n');
  });
});
