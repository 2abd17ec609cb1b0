-- listing_lifetimes is the projection of the booking_lifetimes view: one row per listing
-- with the view's event-derived columns, kept by store.Ingest in the insert's transaction. Its shape
-- is the view's (booking_lifetimes_stored), so the table itself is not created here: it is built by
-- store.EnsureProjection, which every migrate runs after installing the views, from the events
-- already stored (the first build) and again whenever the view definitions change.
--
-- listing_lifetimes_state   one row: the hash of the definitions the projection was built from,
--                           whether a rebuild is in progress, and the refresh statement for the
--                           table's columns (store/queries/projection_upsert.sql)
-- listing_lifetimes_pending while rebuilding, the listing keys Ingest touched, for the catch-up
create table listing_lifetimes_state (
    id         bool primary key default true check (id),
    view_hash  text not null default '',
    rebuilding bool not null default false,
    refresh_sql text not null default ''
);
insert into listing_lifetimes_state default values;

create table listing_lifetimes_pending (
    listing_key text collate "C" not null
);
