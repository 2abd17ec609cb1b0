-- Placeholder so that tern's 1..N numbering holds on branch p alone. Migration 003 belongs to another
-- helper's branch; drop this file when merging (it does nothing).
select 1;
