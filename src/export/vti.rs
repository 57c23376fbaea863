//! VTK XML ImageData (`.vti`, ASCII) with every field of a solver as cell data, readable by
//! ParaView and VisIt (VTK file formats, "Image Data" serial XML format).

use crate::solver::Solver;
use std::fmt::Write as _;
use std::io;
use std::path::Path;

/// Writes all of `solver`'s fields at cell centres to `path`.
pub fn write_fields(solver: &dyn Solver, path: &Path) -> io::Result<()> {
    std::fs::write(path, fields_to_string(solver))
}

/// The `.vti` document for `solver`'s current state.
pub fn fields_to_string(solver: &dyn Solver) -> String {
    let g = solver.info().grid;
    let [nx, ny, nz] = g.n;
    let mut s = String::new();
    let _ = writeln!(s, "<?xml version=\"1.0\"?>");
    let _ = writeln!(
        s,
        "<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\">"
    );
    let _ = writeln!(
        s,
        "  <ImageData WholeExtent=\"0 {nx} 0 {ny} 0 {nz}\" Origin=\"{} {} {}\" Spacing=\"{} {} {}\">",
        g.origin[0], g.origin[1], g.origin[2], g.spacing[0], g.spacing[1], g.spacing[2]
    );
    let _ = writeln!(s, "    <Piece Extent=\"0 {nx} 0 {ny} 0 {nz}\">");
    let _ = writeln!(s, "      <CellData>");
    let mut values = Vec::new();
    for name in solver.field_names() {
        if solver.field(name, &mut values).is_none() {
            continue;
        }
        let _ = writeln!(
            s,
            "        <DataArray type=\"Float64\" Name=\"{name}\" format=\"ascii\">"
        );
        for row in values.chunks(nx) {
            s.push_str("         ");
            for v in row {
                let _ = write!(s, " {v:e}");
            }
            s.push('\n');
        }
        let _ = writeln!(s, "        </DataArray>");
    }
    let _ = writeln!(s, "      </CellData>");
    let _ = writeln!(s, "    </Piece>");
    let _ = writeln!(s, "  </ImageData>");
    let _ = writeln!(s, "</VTKFile>");
    s
}
