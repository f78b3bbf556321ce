"""Molecules <-> labelled graphs through RDKit (optional extra ``chem``)."""

from __future__ import annotations

from .. import deps
from ..exceptions import InvalidInputError

__all__ = ["smiles_to_edge_lists", "edge_lists_to_smiles", "canonical_smiles"]

_BOND_NAMES = {"SINGLE": "single", "DOUBLE": "double", "TRIPLE": "triple", "AROMATIC": "aromatic"}


def _chem():
    deps.require("rdkit", "molecules (SMILES)")
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    return Chem


def smiles_to_edge_lists(smiles):
    """(node labels, edges, edge labels) per molecule: atom symbols (with charge), bond types."""
    Chem = _chem()
    nodes, edges, elabels = [], [], []
    for i, s in enumerate(smiles):
        mol = Chem.MolFromSmiles(str(s))
        if mol is None:
            raise InvalidInputError(f"SMILES number {i} ({s!r}) cannot be parsed; check or drop that molecule")
        nodes.append([_atom_label(a) for a in mol.GetAtoms()])
        edges.append([(b.GetBeginAtomIdx(), b.GetEndAtomIdx()) for b in mol.GetBonds()])
        elabels.append([_BOND_NAMES.get(str(b.GetBondType()), str(b.GetBondType()).lower()) for b in mol.GetBonds()])
    return nodes, edges, elabels


def _atom_label(atom):
    """Atom symbol, then explicit hydrogens ("[nH]" gives "NH") and formal charge ("N+1")."""
    charge = atom.GetFormalCharge()
    hs = atom.GetNumExplicitHs()
    sym = atom.GetSymbol() + ("H" * hs)
    return sym if charge == 0 else f"{sym}{charge:+d}"


def edge_lists_to_smiles(graphs):
    """Canonical SMILES of graphs given as (node labels, edges, edge labels); None where not a valid molecule."""
    Chem = _chem()
    bond_types = {"single": Chem.BondType.SINGLE, "double": Chem.BondType.DOUBLE,
                  "triple": Chem.BondType.TRIPLE, "aromatic": Chem.BondType.AROMATIC}
    out = []
    for labels, edges, elabels in graphs:
        try:
            mol = Chem.RWMol()
            for lab in labels:
                sym, charge = lab, 0
                for sign in ("+", "-"):
                    if sign in lab[1:]:
                        cut = lab.index(sign, 1)
                        sym, charge = lab[:cut], int(lab[cut:])
                hs = len(sym) - len(sym.rstrip("H")) if sym != "H" else 0
                atom = Chem.Atom(sym[: len(sym) - hs])
                atom.SetFormalCharge(charge)
                atom.SetNumExplicitHs(hs)
                mol.AddAtom(atom)
            for (u, v), lab in zip(edges, elabels):
                mol.AddBond(int(u), int(v), bond_types[lab])
                if lab == "aromatic":
                    mol.GetBondBetweenAtoms(int(u), int(v)).SetIsAromatic(True)
                    mol.GetAtomWithIdx(int(u)).SetIsAromatic(True)
                    mol.GetAtomWithIdx(int(v)).SetIsAromatic(True)
            m = mol.GetMol()
            Chem.SanitizeMol(m)
            out.append(Chem.MolToSmiles(m))
        except Exception:  # not a valid molecule: reported as None, never raised
            out.append(None)
    return out


def canonical_smiles(smiles):
    """RDKit's canonical form of each SMILES (None where it cannot be parsed)."""
    Chem = _chem()
    out = []
    for s in smiles:
        mol = Chem.MolFromSmiles(str(s))
        out.append(None if mol is None else Chem.MolToSmiles(mol))
    return out
