-- A later start of a debounce burst moves the queued admission to its own concurrency key, inline
-- limit N and priority (src/db/flow.repo.ts extendDebounce): its workload is the one that runs.
-- The key moved to needs its row as a new admission's does (migrations/0025): the admitter picks
-- keys by their rows, and the row's lock keeps the idle-key sweep off it until the move commits.
-- The admitter's update of `admitted_at` names none of these columns and fires nothing.
CREATE TRIGGER admission_flow_key_moved AFTER UPDATE OF limit_name, limit_key, capacity ON core.admission
  FOR EACH ROW WHEN (NEW.limit_name IS NOT NULL AND NEW.admitted_at IS NULL
                     AND (OLD.limit_name, OLD.limit_key, OLD.capacity) IS DISTINCT FROM (NEW.limit_name, NEW.limit_key, NEW.capacity))
  EXECUTE FUNCTION core.svc_flow_key_of_admission();
