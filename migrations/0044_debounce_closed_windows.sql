-- A debounce window that has closed takes no more starts (docs/flow-control.md, "Debounce": a
-- later start joins "while the window is open"; at the close the execution is admitted, or queued
-- on its concurrency key). The index of open windows held an execution until it was admitted, so
-- a start after the close, while the execution waited for room on its key, joined it anyway: it
-- replaced the payload of an execution whose window had closed, moved its close (its admission)
-- later again, and could not open a window of its own. A window found closed by a later start is
-- marked so (src/db/flow.repo.ts extendDebounce) and leaves the index: that start opens its own,
-- and the queued execution keeps its payload and its place. Its debounce columns stay, so its
-- view still shows when its window closed.
ALTER TABLE core.admission ADD COLUMN debounce_closed boolean NOT NULL DEFAULT false;
DROP INDEX core.admission_debounce_key;
CREATE UNIQUE INDEX admission_debounce_key ON core.admission (debounce_path, debounce_key)
  WHERE admitted_at IS NULL AND debounce_path IS NOT NULL AND NOT debounce_closed;
