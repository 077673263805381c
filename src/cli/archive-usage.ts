// The `svc archive` help text, apart from the command so `svc --help` loads nothing else.

export const ARCHIVE_SUMMARY = 'list or read the event log ranges retention archived (SVC_ARCHIVE_DIR; docs/scaling.md)';

export const ARCHIVE_USAGE = `svc archive [list] [--dir DIR] [--json]
       svc archive show FILE [--dir DIR] [--execution ID] [--json]

  list             the archive files under DIR: one per range of execution ids dropped by
                   retention (SVC_RETENTION_DAYS), oldest range first; compressed with gzip
                   (.jsonl.gz) too
  --dir DIR        where they are (default: $SVC_ARCHIVE_DIR)
  show FILE        the executions a file holds: id, path, status, start, end, events; a
                   name as list prints it (no directory) is looked for under DIR; a gzip
                   file is read as it is
  --execution ID   that execution's events instead, in log order
  --json           JSON on stdout (for programs): the files, the executions, or the events
Reads files only: no server is needed, and none is asked. Exit codes: 0 done, 1 a file or
directory that cannot be read, 2 usage error, 4 no such file (or --dir DIR that is not there), or
no such execution in the file (--execution ID).`;
