-- Reserved: migration 006 is another change landing in parallel (issue 21's branch adds 007 and
-- needs 1..7 without a gap to build). DELETE THIS FILE when that 006 is merged.
select 1;
