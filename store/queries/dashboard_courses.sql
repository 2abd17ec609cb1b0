-- Dashboard: the sources and courses in the projection, for the Listings filters.
select distinct source, course_name
from listing_lifetimes
order by source, course_name
