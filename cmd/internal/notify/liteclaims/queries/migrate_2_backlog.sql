-- Migration 2: a watch is a query. backlog marks a claim of a listing that was already open when
-- its watch asked (a new or changed watch, the first crawl of a source): worded as already open,
-- its age counted from its claim. fingerprints keeps, per watch and source, the fingerprint of the
-- conditions last evaluated (notify.Watch.Fingerprint): a different one asks again.
alter table claims add column backlog integer not null default 0;
create index claims_listing on claims (watch, channel, listing_key);
create table fingerprints (
    watch       text    not null,
    source      text    not null,
    fingerprint text    not null,
    updated_at  integer not null,
    primary key (watch, source)
);
