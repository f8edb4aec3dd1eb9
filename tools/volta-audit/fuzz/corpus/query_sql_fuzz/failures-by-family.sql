WITH latest AS (SELECT id FROM run WHERE status = 'complete' ORDER BY id DESC LIMIT 1)
SELECT c.suite, c.family, r.outcome, count(*) AS cases
FROM result r JOIN test_case c ON c.id = r.case_id JOIN latest ON r.run_id = latest.id
GROUP BY c.suite, c.family, r.outcome ORDER BY c.suite, c.family
