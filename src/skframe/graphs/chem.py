"""Molecules <-> labelled graphs through RDKit (optional extra ``chem``)."""

from __future__ import annotations

import os
import re

import numpy as np
import scipy.sparse as sp

from skframe import deps
from skframe.exceptions import DataFormatError, InvalidInputError
from skframe.limits import check, limit, quoted

__all__ = ["smiles_to_edge_lists", "edge_lists_to_smiles", "canonical_smiles", "morgan_fingerprints", "read_sdf",
           "count_atoms", "mol_from_smiles"]

# the atoms written in a SMILES string: organic-subset symbols (aromatic in lower case), bracket atoms, wildcards
_ATOM = re.compile(r"Cl|Br|\[[^\]]*\]|[BCNOPSFI*]|[bcnops]")


def count_atoms(smiles):
    """The number of atoms a SMILES string writes (hydrogens left implicit are not atoms), read from the text.

    >>> count_atoms("CC(=O)[O-]"), count_atoms("c1ccccc1Cl")
    (4, 7)
    """
    return len(_ATOM.findall(smiles))


def mol_from_smiles(smiles, where="SMILES"):
    """RDKit's molecule of a SMILES string (None when it cannot be parsed), its size checked first.

    A string writing more atoms than the ``atoms`` limit of :mod:`skframe.limits` raises
    :class:`DataFormatError` (naming ``where``) before RDKit reads it: parsing and fingerprints
    cost more than linearly in the atoms.
    """
    Chem = _chem()
    smiles = str(smiles)
    if len(smiles) > limit("atoms"):  # a shorter string cannot write more atoms than characters
        check("atoms", count_atoms(smiles), f"{where}: the molecule")
    return Chem.MolFromSmiles(smiles)

_BOND_NAMES = {"SINGLE": "single", "DOUBLE": "double", "TRIPLE": "triple", "AROMATIC": "aromatic"}


def _chem():
    deps.require("rdkit", "molecules (SMILES)")
    from rdkit import Chem, RDLogger  # lazy: RDKit is optional (the chem extra)

    RDLogger.DisableLog("rdApp.*")
    return Chem


def smiles_to_edge_lists(smiles):
    """(node labels, edges, edge labels) per molecule: atom symbols (with charge), bond types."""
    nodes, edges, elabels = [], [], []
    for i, s in enumerate(smiles):
        mol = mol_from_smiles(s, f"SMILES number {i}")
        if mol is None:
            raise InvalidInputError(f"SMILES number {i} ({quoted(s)}) cannot be parsed; check or drop that molecule")
        n, e, el = _mol_edge_lists(mol)
        nodes.append(n)
        edges.append(e)
        elabels.append(el)
    return nodes, edges, elabels


def _mol_edge_lists(mol):
    """(node labels, edges, edge labels) of one RDKit molecule."""
    return ([_atom_label(a) for a in mol.GetAtoms()],
            [(b.GetBeginAtomIdx(), b.GetEndAtomIdx()) for b in mol.GetBonds()],
            [_BOND_NAMES.get(str(b.GetBondType()), str(b.GetBondType()).lower()) for b in mol.GetBonds()])


def read_sdf(path):
    """Molecules of an SDF file as edge lists, with each record's properties and SMILES.

    Parameters
    ----------
    path : str or path-like
        An SDF (MDL SD) file; hydrogens written as atoms are removed, as RDKit does by
        default, so the graphs are labelled as :func:`smiles_to_edge_lists` labels them.

    Returns
    -------
    nodes, edges, edge_labels : lists, one entry per molecule
    properties : list of dict
        The ``> <NAME>`` data fields of each record, as strings.
    smiles : list of str
        Canonical SMILES of each molecule.

    Raises
    ------
    DataFormatError
        A record cannot be read as a molecule (its 1-based number is named), or the file holds none.
    """
    Chem = _chem()
    nodes, edges, elabels, props, smiles = [], [], [], [], []
    with open(os.fspath(path), "rb") as fh:
        for i, mol in enumerate(Chem.ForwardSDMolSupplier(fh), 1):
            if mol is None:
                raise DataFormatError(f"{path}: SDF record {i} cannot be read as a molecule (bad atom or bond "
                                      "block, or impossible valence); fix or delete that record")
            check("atoms", mol.GetNumAtoms(), f"{path}: SDF record {i}")
            n, e, el = _mol_edge_lists(mol)
            nodes.append(n)
            edges.append(e)
            elabels.append(el)
            props.append({k: str(v) for k, v in mol.GetPropsAsDict(includePrivate=False).items()})
            smiles.append(Chem.MolToSmiles(mol))
    if not nodes:
        raise DataFormatError(f"{path} holds no SDF record; each molecule ends with a line '$$$$'")
    return nodes, edges, elabels, props, smiles


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
    for i, s in enumerate(smiles):
        mol = mol_from_smiles(s, f"SMILES number {i}")
        out.append(None if mol is None else Chem.MolToSmiles(mol))
    return out


def morgan_fingerprints(smiles, radius=2, n_bits=2048):
    """Morgan (circular) fingerprint bits of each molecule as a sparse CSR matrix of 0/1 (uint8).

    Feeds the Tanimoto kernels directly; sparse inputs stay sparse through skframe's kernels.
    """
    if isinstance(radius, bool) or not isinstance(radius, int) or radius < 0:
        raise InvalidInputError(f"radius={radius!r} must be a non-negative integer (2 is the usual ECFP4)")
    if isinstance(n_bits, bool) or not isinstance(n_bits, int) or n_bits < 1:
        raise InvalidInputError(f"n_bits={n_bits!r} must be a positive integer, e.g. 2048")
    _chem()
    from rdkit.Chem import rdFingerprintGenerator  # lazy: RDKit is optional (the chem extra)

    gen = rdFingerprintGenerator.GetMorganGenerator(radius=radius, fpSize=n_bits)
    indptr, indices = [0], []
    for i, s in enumerate(smiles):
        mol = mol_from_smiles(s, f"SMILES number {i}")
        if mol is None:
            raise InvalidInputError(f"SMILES number {i} ({quoted(s)}) cannot be parsed; check or drop that molecule")
        on = sorted(gen.GetFingerprint(mol).GetOnBits())
        indices.extend(on)
        indptr.append(len(indices))
    data = np.ones(len(indices), dtype=np.uint8)
    return sp.csr_matrix((data, np.asarray(indices, np.int64), np.asarray(indptr, np.int64)),
                         shape=(len(indptr) - 1, n_bits))
