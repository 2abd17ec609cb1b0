-- Dashboard: the distinct courses and sources in the projection, for the Listings filters, by a
-- skip scan over the (course_name, play_date) and (source, play_date) indexes: one index probe per
-- distinct value instead of reading every listing.
with recursive courses(v) as (
    select min(course_name) from listing_lifetimes
    union all
    select (select min(course_name) from listing_lifetimes where course_name > c.v) from courses c where c.v is not null
), sources(v) as (
    select min(source) from listing_lifetimes
    union all
    select (select min(source) from listing_lifetimes where source > s.v) from sources s where s.v is not null
)
select 'source', v from sources where v is not null
union all
select 'course', v from courses where v is not null
