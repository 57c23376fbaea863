//! Ghia, Ghia & Shin (1982) lid-driven cavity centreline data, embedded from `assets/`.

const U_CSV: &str = include_str!("../../assets/ghia1982_u_vertical_centerline.csv");
const V_CSV: &str = include_str!("../../assets/ghia1982_v_horizontal_centerline.csv");

/// One centreline table: station coordinates and one value column per Reynolds number.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub reynolds: Vec<f64>,
    /// `(coordinate, values per Reynolds number)`.
    pub rows: Vec<(f64, Vec<f64>)>,
}

impl Table {
    /// Parses `index,coordinate,<name>_Re<R>,...` after `#` comment lines.
    pub fn parse(text: &str) -> Result<Table, String> {
        let mut lines = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'));
        let header = lines.next().ok_or("no header line")?;
        let reynolds = header
            .split(',')
            .skip(2)
            .map(|h| {
                h.rsplit_once("_Re")
                    .and_then(|(_, r)| r.parse().ok())
                    .ok_or_else(|| format!("column `{h}` does not name a Reynolds number"))
            })
            .collect::<Result<Vec<f64>, String>>()?;
        let mut rows = Vec::new();
        for line in lines {
            let cells: Vec<f64> = line
                .split(',')
                .map(|c| c.trim().parse::<f64>().map_err(|e| format!("`{line}`: {e}")))
                .collect::<Result<_, _>>()?;
            if cells.len() != reynolds.len() + 2 {
                return Err(format!(
                    "`{line}` has {} columns, expected {}",
                    cells.len(),
                    reynolds.len() + 2
                ));
            }
            rows.push((cells[1], cells[2..].to_vec()));
        }
        Ok(Table { reynolds, rows })
    }

    /// The `(coordinate, value)` points at Reynolds number `re`, if tabulated.
    pub fn points(&self, re: f64) -> Option<Vec<[f64; 2]>> {
        let k = self
            .reynolds
            .iter()
            .position(|r| (r - re).abs() < 1e-9 * re.abs().max(1.0))?;
        Some(self.rows.iter().map(|(c, v)| [*c, v[k]]).collect())
    }
}

/// u(y) on the vertical centreline x = 0.5.
pub fn ghia_u() -> Table {
    Table::parse(U_CSV).expect("the embedded Ghia u table parses (checked by a test)")
}

/// v(x) on the horizontal centreline y = 0.5.
pub fn ghia_v() -> Table {
    Table::parse(V_CSV).expect("the embedded Ghia v table parses (checked by a test)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_tables_parse() {
        let u = Table::parse(U_CSV).unwrap();
        assert_eq!(u.reynolds, vec![100.0, 400.0, 1000.0]);
        assert_eq!(u.rows.len(), 17);
        let p = u.points(1000.0).unwrap();
        assert_eq!(p.last().unwrap(), &[1.0, 1.0]);
        let v = Table::parse(V_CSV).unwrap();
        assert_eq!(v.rows.len(), 17);
        assert!(v.points(250.0).is_none());
    }
}
