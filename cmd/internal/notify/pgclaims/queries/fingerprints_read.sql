-- The fingerprint each watch was last answered with.
select watch, fingerprint from notification_fingerprints
